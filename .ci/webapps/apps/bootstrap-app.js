// The notes app on Bootstrap 5 (plain DOM, no custom elements, no shadow roots): floating-label inputs,
// a form switch (an <input role="switch"> with a <label for>), row buttons that are <a>s; a modal that
// fades in with CSS transitions (display:block first, .show after a forced reflow) over a separate
// .modal-backdrop appended to <body>, aria-hidden/aria-modal toggled; a toast that fades in and out.
"use strict";
(() => {
  const model = window.notesModel;
  const content = document.getElementById("content");
  const esc = model.plain;
  const modalEl = document.getElementById("confirm");
  const modal = new bootstrap.Modal(modalEl);

  function signInView() {
    content.innerHTML = `
      <div class="form-floating mb-3">
        <input type="email" class="form-control" id="email" placeholder="you@example.com">
        <label for="email">Email</label></div>
      <div class="form-floating mb-3">
        <input type="password" class="form-control" id="password" placeholder="Password">
        <label for="password">Password</label></div>
      <button type="button" class="btn btn-primary" id="sign-in">Sign in</button>
      <p class="text-danger mt-2" id="error"></p>`;
    model.wireSignIn(content, notesView);
  }

  function notesView() {
    content.innerHTML = `
      <h2 class="h4">Signed in as ${esc(model.state.user)}</h2>
      <div class="form-check form-switch my-3">
        <input class="form-check-input" type="checkbox" role="switch" id="notifications">
        <label class="form-check-label" for="notifications">Notifications</label></div>
      <ul class="list-group" id="notes"></ul>`;
    const toggle = content.querySelector("#notifications");
    toggle.checked = model.state.notifications;
    toggle.addEventListener("change", () => model.toggle(toggle.checked));
    drawNotes();
  }

  function drawNotes() {
    const list = content.querySelector("#notes");
    list.replaceChildren();
    for (const note of model.state.notes) {
      const row = document.createElement("li");
      row.className = "list-group-item d-flex justify-content-between align-items-center";
      row.innerHTML = `<span>${esc(note.body)} (note by ${esc(note.author)})</span>
        <a href="#" class="btn btn-sm btn-outline-danger" role="button" aria-label="Delete note by ${esc(note.author)}">Delete</a>`;
      row.querySelector("a").addEventListener("click", (event) => {
        event.preventDefault();
        modalEl.dataset.note = String(note.id);
        document.getElementById("question").textContent = `Delete note by ${note.author}?`;
        modal.show();
      });
      list.append(row);
    }
  }

  document.getElementById("delete").addEventListener("click", () => {
    const id = Number(modalEl.dataset.note);
    // delete once the modal has faded out, as an app that waits for Bootstrap's hidden event does
    modalEl.addEventListener("hidden.bs.modal", () => {
      if (model.removeThenRedraw(id, drawNotes)) toast("Note deleted");
    }, {once: true});
    modal.hide();
  });

  function toast(message) {
    const el = document.createElement("div");
    el.className = "toast";
    el.setAttribute("role", "status");
    el.setAttribute("aria-live", "polite");
    el.innerHTML = `<div class="toast-body">${esc(message)}</div>`;
    document.getElementById("toasts").append(el);
    el.addEventListener("hidden.bs.toast", () => el.remove());
    bootstrap.Toast.getOrCreateInstance(el, {delay: 3000}).show();
  }

  setTimeout(signInView, model.hydrateMs);  // hydration: the form appears after the app "loads"
})();
