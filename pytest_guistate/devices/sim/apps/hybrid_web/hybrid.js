// The hybrid app's page (the sim's WebView content): sign-in, notes with a late redraw, a toggle and a link
// that leaves the page for a native screen.
//
// The backend (the sim, on loopback) deletes a note at once, by *position*, but the list here redraws only
// `redraw_ms` later (the sim's refresh_delay fault). Until then the deleted row is still drawn and its
// Delete button acts on the same position: a blind re-tap deletes the NEXT note, as in the sim's Feed.
(function () {
  "use strict";

  const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
  const signin = $("signin"), notesScreen = $("notes_screen"), list = $("notes"), toast = $("toast");
  let redrawTimer = null;

  async function api(path, body) {
    const init = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body) };
    const response = await fetch(path, init);
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return response.json();
  }

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function renderNotes(notes) {
    // New nodes on every redraw: references to old rows go stale, as a real list's would.
    list.replaceChildren(...notes.map((note, position) => {
      const row = el("li", { class: "note", "data-testid": "note", "data-note-id": note.id });
      const del = el("button", { type: "button", class: "delete", "data-testid": "delete",
        "aria-label": `Delete ${note.title}` }, "Delete");
      del.addEventListener("click", () => remove(position));
      row.append(el("span", { class: "title", "data-testid": "note_title" }, note.title), del);
      return row;
    }));
  }

  function show(state) {
    signin.hidden = state.signed_in;
    notesScreen.hidden = !state.signed_in;
    $("account").textContent = state.signed_in ? `Signed in as ${state.user}` : "";
    $("sync_toggle").checked = state.sync_wifi_only;
    renderNotes(state.notes);
  }

  function showToast(text) {
    toast.textContent = text;
    toast.hidden = false;
    setTimeout(() => { toast.hidden = true; }, 1500);
  }

  async function remove(position) {
    const reply = await api("/api/delete", { position });
    if (!reply.deleted) return;  // a stale row past the end: nothing to delete
    if (redrawTimer !== null) return;  // a redraw is already due: it shows this deletion too
    const redraw = async () => { redrawTimer = null; show(await api("/api/state")); showToast("Note deleted"); };
    if (reply.redraw_ms <= 0) await redraw();
    else redrawTimer = setTimeout(redraw, reply.redraw_ms);
  }

  signin.addEventListener("submit", async (event) => {
    event.preventDefault();
    const reply = await api("/api/login", { email: $("email").value, password: $("password").value });
    $("password").value = "";
    $("signin_error").hidden = reply.signed_in;
    if (reply.signed_in) show(reply);
  });

  $("sync_toggle").addEventListener("change", (event) => {
    api("/api/toggle", { name: "sync_wifi_only", value: event.target.checked });
  });

  api("/api/state").then(show);
})();
