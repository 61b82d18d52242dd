// The notes model the component-library apps share: a sign-in, five notes, a delete that is
// confirmed in a dialog and redrawn late, a toggle. window.__guistateActionLog holds the effective
// actions (each delete once), window.__guistateGroundTruth() the model, as the web Feed does.
"use strict";
(() => {
  const params = new URLSearchParams(location.search);
  const state = {
    signedIn: false,
    user: "",
    notifications: false,
    notes: [
      {id: 1, author: "Alice", body: "Buy milk"},
      {id: 2, author: "Bob", body: "Call the plumber"},
      {id: 3, author: "Carol", body: "Book the flights"},
      {id: 4, author: "Dan", body: "Water the plants"},
    ],
  };
  const log = [];
  window.__guistateActionLog = log;
  window.__guistateGroundTruth = () => ({
    signed_in: state.signedIn, user: state.user, notifications: state.notifications,
    notes: state.notes.map((n) => ({id: n.id, author: n.author})),
  });
  window.notesModel = {
    state,
    // text the apps write into innerHTML: user input (the sign-in email) and note fields, markup stripped
    plain: (text) => String(text).replace(/[<&>"]/g, ""),
    // how long the list takes to redraw after a delete, and the app to hydrate (ms, from the URL)
    redrawMs: Number(params.get("redraw") || 700),
    hydrateMs: Number(params.get("hydrate") || 900),
    signIn(email, password) {
      if (!email.includes("@") || password.length < 4) return false;
      state.signedIn = true;
      state.user = email;
      log.push({action: "sign_in", user: email});
      return true;
    },
    remove(id) {
      const at = state.notes.findIndex((n) => n.id === id);
      if (at < 0) return false;
      const [note] = state.notes.splice(at, 1);
      log.push({action: "delete_note", note_id: note.id, author: note.author, position: at});
      return true;
    },
    // every app's sign-in form: #sign-in submits #email and #password (`read` gives a field's value, awaited:
    // Ionic's input lives in its shadow root), #error says why not
    wireSignIn(root, signedIn, read = (field) => field.value) {
      root.querySelector("#sign-in").addEventListener("click", async () => {
        const email = await read(root.querySelector("#email"));
        const password = await read(root.querySelector("#password"));
        if (this.signIn(email, password)) signedIn();
        else root.querySelector("#error").textContent = "Wrong email or password";
      });
    },
    // a confirmed delete: the list redraws late, as a slow backend would; false when there was no such note
    removeThenRedraw(id, redraw) {
      if (!this.remove(id)) return false;
      setTimeout(redraw, this.redrawMs);
      return true;
    },
    toggle(on) {
      state.notifications = on;
      log.push({action: "toggle_notifications", on});
    },
  };
})();
