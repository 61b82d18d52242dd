// The notes app on Onsen UI's custom elements: ons-input wraps a native input, ons-switch a checkbox,
// ons-button is a custom element with role="button", ons.notification.confirm an alert dialog.
"use strict";
(() => {
  const model = window.notesModel;
  const content = document.getElementById("content");
  const esc = model.plain;

  function signInView() {
    content.innerHTML = `
      <ons-list>
        <ons-list-item><ons-input id="email" type="email" placeholder="you@example.com" modifier="underbar"
          float></ons-input></ons-list-item>
        <ons-list-item><ons-input id="password" type="password" placeholder="Password" modifier="underbar"
          float></ons-input></ons-list-item>
      </ons-list>
      <p style="padding: 0 16px"><ons-button id="sign-in" modifier="large">Sign in</ons-button></p>
      <p id="error"></p>`;
    model.wireSignIn(content, notesView);
  }

  function notesView() {
    content.innerHTML = `
      <ons-list-header>Signed in as ${esc(model.state.user)}</ons-list-header>
      <ons-list><ons-list-item><div class="center">Notifications</div>
        <div class="right"><ons-switch id="notifications"></ons-switch></div></ons-list-item></ons-list>
      <ons-list id="notes"></ons-list>`;
    const toggle = content.querySelector("#notifications");
    toggle.checked = model.state.notifications;
    toggle.addEventListener("change", (ev) => model.toggle(ev.target.checked));
    drawNotes();
  }

  function drawNotes() {
    const list = content.querySelector("#notes");
    list.replaceChildren();
    for (const note of model.state.notes) {
      const row = ons.createElement(`<ons-list-item><div class="center">${esc(note.body)} (note by ${esc(note.author)})</div>
        <div class="right"><ons-button modifier="quiet" aria-label="Delete note by ${esc(note.author)}"
          >Delete</ons-button></div></ons-list-item>`);
      row.querySelector("ons-button").addEventListener("click", async () => {
        const answer = await ons.notification.confirm({title: "Notes", message: `Delete note by ${note.author}?`,
                                                       buttonLabels: ["Cancel", "Delete"]});
        if (answer === 1) model.removeThenRedraw(note.id, drawNotes);
      });
      list.append(row);
    }
  }

  ons.ready(() => setTimeout(signInView, model.hydrateMs));  // hydration: the form appears after load
})();
