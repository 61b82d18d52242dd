// The notes app on SAP UI5 Web Components (@ui5/webcomponents 2.x): ui5-input keeps its native input
// deep in its shadow root, labelled by accessible-name and a ui5-label for=; ui5-switch has no native
// checkbox (a role="switch" div in its shadow root); ui5-li draws its text= attribute inside its shadow
// root, each row's slotted delete button named by accessible-name; ui5-dialog opens in the top layer
// over a block layer, its buttons in a ui5-bar footer; ui5-toast shows a notice that fades out.
import "@ui5/webcomponents/dist/Input.js";
import "@ui5/webcomponents/dist/Label.js";
import "@ui5/webcomponents/dist/Button.js";
import "@ui5/webcomponents/dist/Switch.js";
import "@ui5/webcomponents/dist/Title.js";
import "@ui5/webcomponents/dist/List.js";
import "@ui5/webcomponents/dist/ListItemStandard.js";
import "@ui5/webcomponents/dist/Dialog.js";
import "@ui5/webcomponents/dist/Bar.js";
import "@ui5/webcomponents/dist/Toast.js";

const model = window.notesModel;
const content = document.getElementById("content");
const esc = model.plain;

function signInView() {
  content.innerHTML = `
    <ui5-label for="email" show-colon>Email</ui5-label>
    <ui5-input id="email" type="Email" placeholder="you@example.com"></ui5-input>
    <ui5-label for="password" show-colon>Password</ui5-label>
    <ui5-input id="password" type="Password" accessible-name="Password"></ui5-input>
    <ui5-button id="sign-in" design="Emphasized">Sign in</ui5-button>
    <p id="error"></p>`;
  model.wireSignIn(content, notesView);
}

function notesView() {
  content.innerHTML = `
    <ui5-title level="H2">Signed in as ${esc(model.state.user)}</ui5-title>
    <div class="switch"><ui5-label for="notifications">Notifications</ui5-label>
      <ui5-switch id="notifications" accessible-name="Notifications"></ui5-switch></div>
    <ui5-list id="notes" header-text="Notes" selection-mode="Delete"></ui5-list>
    <ui5-dialog id="confirm" header-text="Notes">
      <p id="question"></p>
      <ui5-bar slot="footer" design="Footer">
        <ui5-button slot="endContent" id="cancel" design="Transparent">Cancel</ui5-button>
        <ui5-button slot="endContent" id="delete" design="Negative">Delete</ui5-button>
      </ui5-bar>
    </ui5-dialog>
    <ui5-toast id="toast" placement="BottomCenter" duration="3000">Note deleted</ui5-toast>`;
  const toggle = content.querySelector("#notifications");
  toggle.checked = model.state.notifications;
  toggle.addEventListener("change", () => model.toggle(toggle.checked));
  const dialog = content.querySelector("#confirm");
  content.querySelector("#cancel").addEventListener("click", () => { dialog.open = false; });
  content.querySelector("#delete").addEventListener("click", () => {
    dialog.open = false;
    if (model.removeThenRedraw(Number(dialog.dataset.note), drawNotes)) content.querySelector("#toast").open = true;
  });
  drawNotes();
}

function drawNotes() {
  const list = content.querySelector("#notes");
  list.replaceChildren();
  for (const note of model.state.notes) {
    const item = document.createElement("ui5-li");
    item.setAttribute("text", `${note.body} (note by ${note.author})`);
    item.innerHTML = `<ui5-button slot="deleteButton" design="Transparent"
      accessible-name="Delete note by ${esc(note.author)}">Delete</ui5-button>`;
    item.querySelector("ui5-button").addEventListener("click", () => {
      const dialog = content.querySelector("#confirm");
      dialog.dataset.note = String(note.id);
      content.querySelector("#question").textContent = `Delete note by ${note.author}?`;
      dialog.open = true;
    });
    list.append(item);
  }
}

// hydration: the form appears only after the components load and the app "fetches" its session
customElements.whenDefined("ui5-input").then(() => setTimeout(signInView, model.hydrateMs));
