// The notes app on Framework7 (iOS theme, or ?theme=md): list inputs, a toggle, a confirm dialog that
// fades in over a dimmed backdrop (a div.dialog, no role="dialog"), a list that redraws late.
"use strict";
(() => {
  const model = window.notesModel;
  const theme = new URLSearchParams(location.search).get("theme") || "ios";
  const app = new Framework7({el: "#app", theme});
  const content = document.getElementById("content");
  const esc = model.plain;

  function signInView() {
    content.innerHTML = `
      <div class="list list-strong-ios list-outline-ios"><ul>
        <li class="item-content item-input"><div class="item-inner">
          <div class="item-title item-label">Email</div>
          <div class="item-input-wrap"><input type="email" id="email" placeholder="you@example.com"></div>
        </div></li>
        <li class="item-content item-input"><div class="item-inner">
          <div class="item-title item-label">Password</div>
          <div class="item-input-wrap"><input type="password" id="password"></div>
        </div></li>
      </ul></div>
      <div class="block"><button class="button button-fill" id="sign-in">Sign in</button></div>
      <div class="block" id="error"></div>`;
    model.wireSignIn(content, notesView);
  }

  function notesView() {
    content.innerHTML = `
      <div class="block-title">Signed in as ${esc(model.state.user)}</div>
      <div class="list"><ul><li class="item-content"><div class="item-inner">
        <div class="item-title">Notifications</div>
        <div class="item-after"><label class="toggle" id="notifications">
          <input type="checkbox" aria-label="Notifications"><span class="toggle-icon"></span></label></div>
      </div></li></ul></div>
      <div class="list" id="notes"><ul></ul></div>`;
    const toggle = app.toggle.create({el: content.querySelector("#notifications")});
    toggle.checked = model.state.notifications;
    toggle.on("change", () => model.toggle(toggle.checked));
    drawNotes();
  }

  function drawNotes() {
    const list = content.querySelector("#notes ul");
    list.replaceChildren();
    for (const note of model.state.notes) {
      const row = document.createElement("li");
      row.className = "item-content";
      row.innerHTML = `<div class="item-inner"><div class="item-title">${esc(note.body)} (note by ${esc(note.author)})</div>
        <div class="item-after"><a class="button color-red" aria-label="Delete note by ${esc(note.author)}">Delete</a></div></div>`;
      row.querySelector("a").addEventListener("click", () => {
        app.dialog.create({title: "Notes", text: `Delete note by ${note.author}?`, buttons: [
          {text: "Cancel"},
          {text: "Delete", onClick: () => {
            model.removeThenRedraw(note.id, drawNotes);
          }},
        ]}).open();
      });
      list.append(row);
    }
  }

  setTimeout(signInView, model.hydrateMs);  // hydration: the form appears after the app "loads"
})();
