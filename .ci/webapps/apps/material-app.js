// The notes app on Material Web (@material/web, Lit): md-outlined-text-field keeps its input in a shadow
// root, md-filled-button / md-text-button their button (the host's aria-label goes onto it), md-switch
// is a role="switch" input inside a <label>; md-dialog opens a native <dialog> in the top layer with
// its ::backdrop scrim and slotted actions. Material Web has no snackbar.
import "@material/web/textfield/outlined-text-field.js";
import "@material/web/button/filled-button.js";
import "@material/web/button/text-button.js";
import "@material/web/switch/switch.js";
import "@material/web/list/list.js";
import "@material/web/list/list-item.js";
import "@material/web/dialog/dialog.js";

const model = window.notesModel;
const content = document.getElementById("content");
const esc = model.plain;

function signInView() {
  content.innerHTML = `
    <md-outlined-text-field id="email" type="email" label="Email" placeholder="you@example.com"></md-outlined-text-field>
    <md-outlined-text-field id="password" type="password" label="Password"></md-outlined-text-field>
    <md-filled-button id="sign-in">Sign in</md-filled-button>
    <p id="error"></p>`;
  model.wireSignIn(content, notesView);
}

function notesView() {
  content.innerHTML = `
    <h2>Signed in as ${esc(model.state.user)}</h2>
    <label class="switch">Notifications <md-switch id="notifications"></md-switch></label>
    <md-list id="notes"></md-list>
    <md-dialog id="confirm">
      <div slot="headline">Notes</div>
      <div slot="content" id="question"></div>
      <div slot="actions">
        <md-text-button value="cancel" id="cancel">Cancel</md-text-button>
        <md-text-button value="delete" id="delete">Delete</md-text-button>
      </div>
    </md-dialog>`;
  const toggle = content.querySelector("#notifications");
  toggle.selected = model.state.notifications;
  toggle.addEventListener("change", () => model.toggle(toggle.selected));
  const dialog = content.querySelector("#confirm");
  content.querySelector("#cancel").addEventListener("click", () => dialog.close("cancel"));
  content.querySelector("#delete").addEventListener("click", () => dialog.close("delete"));
  dialog.addEventListener("close", () => {
    if (dialog.returnValue === "delete") model.removeThenRedraw(Number(dialog.dataset.note), drawNotes);
  });
  drawNotes();
}

function drawNotes() {
  const list = content.querySelector("#notes");
  list.replaceChildren();
  for (const note of model.state.notes) {
    const item = document.createElement("md-list-item");
    item.innerHTML = `${esc(note.body)} (note by ${esc(note.author)})
      <md-text-button slot="end" aria-label="Delete note by ${esc(note.author)}">Delete</md-text-button>`;
    item.querySelector("md-text-button").addEventListener("click", () => {
      const dialog = content.querySelector("#confirm");
      dialog.dataset.note = String(note.id);
      content.querySelector("#question").textContent = `Delete note by ${note.author}?`;
      dialog.show();
    });
    list.append(item);
  }
}

// hydration: the form appears only after the components load and the app "fetches" its session
customElements.whenDefined("md-outlined-text-field").then(() => setTimeout(signInView, model.hydrateMs));
