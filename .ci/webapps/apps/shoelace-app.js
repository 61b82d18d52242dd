// The notes app on Shoelace (Lit web components): sl-input keeps its native input in an open shadow
// root (the password one beside a show/hide button), sl-button and sl-switch too; sl-dialog is a
// role="dialog" panel over an overlay inside its shadow root, its buttons slotted from the light DOM;
// sl-alert's toast() moves a notice into a fixed stack. The components are defined lazily.
"use strict";
(() => {
  const model = window.notesModel;
  const content = document.getElementById("content");
  const esc = model.plain;

  function signInView() {
    content.innerHTML = `
      <sl-input id="email" type="email" label="Email" placeholder="you@example.com"></sl-input>
      <sl-input id="password" type="password" label="Password" password-toggle></sl-input>
      <sl-button id="sign-in" variant="primary">Sign in</sl-button>
      <p id="error"></p>`;
    model.wireSignIn(content, notesView);
  }

  function notesView() {
    content.innerHTML = `
      <h2>Signed in as ${esc(model.state.user)}</h2>
      <sl-switch id="notifications">Notifications</sl-switch>
      <div id="notes"></div>
      <sl-dialog id="confirm" label="Notes">
        <p id="question"></p>
        <sl-button slot="footer" id="cancel">Cancel</sl-button>
        <sl-button slot="footer" id="delete" variant="danger">Delete</sl-button>
      </sl-dialog>`;
    const toggle = content.querySelector("#notifications");
    toggle.checked = model.state.notifications;
    toggle.addEventListener("sl-change", () => model.toggle(toggle.checked));
    const dialog = content.querySelector("#confirm");
    content.querySelector("#cancel").addEventListener("click", () => dialog.hide());
    content.querySelector("#delete").addEventListener("click", async () => {
      const id = Number(dialog.dataset.note);
      await dialog.hide();
      if (model.removeThenRedraw(id, drawNotes)) toast("Note deleted");
    });
    drawNotes();
  }

  function drawNotes() {
    const list = content.querySelector("#notes");
    list.replaceChildren();
    for (const note of model.state.notes) {
      const row = document.createElement("div");
      row.className = "row";
      row.innerHTML = `<span>${esc(note.body)} (note by ${esc(note.author)})</span>
        <sl-button variant="text" size="small" aria-label="Delete note by ${esc(note.author)}">Delete</sl-button>`;
      row.querySelector("sl-button").addEventListener("click", () => {
        const dialog = content.querySelector("#confirm");
        dialog.dataset.note = String(note.id);
        content.querySelector("#question").textContent = `Delete note by ${note.author}?`;
        dialog.show();
      });
      list.append(row);
    }
  }

  function toast(message) {
    const alert = Object.assign(document.createElement("sl-alert"), {variant: "primary", closable: true, duration: 3000});
    alert.textContent = message;
    document.body.append(alert);
    customElements.whenDefined("sl-alert").then(() => alert.toast());
  }

  // hydration: the form appears after the app "fetches" its session; the autoloader then defines its
  // elements, so for a moment they are in the page without their shadow roots
  setTimeout(signInView, model.hydrateMs);
})();
