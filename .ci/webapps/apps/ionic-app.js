// The notes app on Ionic's web components (@ionic/core): ion-input, ion-button, ion-toggle and
// ion-alert keep their native controls in shadow roots; Ionic moves the host's aria-label inside.
"use strict";
(() => {
  const model = window.notesModel;
  const content = document.getElementById("content");

  function signInView() {
    content.innerHTML = `
      <ion-list>
        <ion-item><ion-input id="email" type="email" label="Email" label-placement="stacked"
          placeholder="you@example.com"></ion-input></ion-item>
        <ion-item><ion-input id="password" type="password" label="Password" label-placement="stacked"
          ></ion-input></ion-item>
      </ion-list>
      <ion-button id="sign-in" expand="block">Sign in</ion-button>
      <ion-text color="danger"><p id="error"></p></ion-text>`;
    model.wireSignIn(content, notesView, async (field) => (await field.getInputElement()).value);
  }

  function notesView() {
    content.innerHTML = `
      <h2>Signed in as ${model.plain(model.state.user)}</h2>
      <ion-list>
        <ion-item><ion-toggle id="notifications">Notifications</ion-toggle></ion-item>
      </ion-list>
      <ion-list id="notes"></ion-list>`;
    const toggle = content.querySelector("#notifications");
    toggle.checked = model.state.notifications;
    toggle.addEventListener("ionChange", (ev) => model.toggle(ev.detail.checked));
    drawNotes();
  }

  function drawNotes() {
    const list = content.querySelector("#notes");
    list.replaceChildren();
    for (const note of model.state.notes) {
      const item = document.createElement("ion-item");
      const label = document.createElement("ion-label");
      label.textContent = `${note.body} (note by ${note.author})`;
      const button = document.createElement("ion-button");
      button.setAttribute("slot", "end");
      button.setAttribute("fill", "clear");
      button.setAttribute("color", "danger");
      button.setAttribute("aria-label", `Delete note by ${note.author}`);
      button.textContent = "Delete";
      button.addEventListener("click", () => confirmDelete(note));
      item.append(label, button);
      list.append(item);
    }
  }

  async function confirmDelete(note) {
    const alert = document.createElement("ion-alert");
    alert.header = `Delete note by ${note.author}?`;
    alert.buttons = [
      {text: "Cancel", role: "cancel"},
      {text: "Delete", role: "destructive", handler: () => {
        model.removeThenRedraw(note.id, drawNotes);
      }},
    ];
    document.body.appendChild(alert);
    await alert.present();
  }

  // hydration: the form appears only after the components load and the app "fetches" its session
  customElements.whenDefined("ion-input").then(() => setTimeout(signInView, model.hydrateMs));
})();
