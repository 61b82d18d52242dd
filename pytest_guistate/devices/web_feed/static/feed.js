// Mobile web Feed (issue 6): the sim's stale-list delete (TSR figure 2) with real rendering and timing.
//
// The backend deletes a post at once, but the list redraws only `delay` ms later (query parameter)
// or after a pull-to-refresh. Until then the deleted row is still drawn and its Delete button acts
// by *position*, like a RecyclerView adapter: a blind re-tap then confirm deletes the NEXT post.
// window.__guistateActionLog holds the effective actions in the sim's shape
// ({action: "delete_post", post_id, author, position}, ...); window.__guistateGroundTruth() the model.
(function () {
  "use strict";

  const params = new URLSearchParams(location.search);
  function msParam(name, fallback) {
    const raw = params.get(name);
    if (raw === null || raw === "") return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new Error(`query parameter ${name}=${raw} is not a number of ms >= 0`);
    return value;
  }
  const config = {
    delay: msParam("delay", 0),        // backend delete -> list redraw
    refresh: msParam("refresh", 600),  // pull-to-refresh spinner time before the redraw
    toast: msParam("toast", 1500),     // how long "Post deleted" stays
    pull: msParam("pull", 60),         // CSS px to drag down before a release refreshes
  };

  const AUTHORS = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy"];
  const TEXTS = [
    "Morning run done, 10 km in the rain.",
    "Anyone tried the new ramen place on 5th street?",
    "Our team shipped the release tonight!",
    "<img src=x onerror=alert(1)>",  // hostile text: must stay text in the DOM and escaped in the tree
    "Sunset from the pier, no filter.",
    "Looking for a reading list on distributed systems.",
    "The cat learned to open the fridge. Send help.",
    "Trying sourdough again, attempt number seven.",
    "Board game night on Friday, who is in?",
    "Finally fixed the flaky test. It was the clock.",
  ];
  const COLORS = ["#ef5350", "#ab47bc", "#5c6bc0", "#29b6f6", "#26a69a", "#9ccc65", "#ffca28", "#ff7043",
    "#8d6e63", "#78909c"];

  const state = {
    backend: AUTHORS.map((author, i) => ({ id: `p${i + 1}`, author, text: TEXTS[i], color: COLORS[i] })),
    shown: [],          // what the adapter draws: stale until a redraw
    confirm: null,      // adapter position the open dialog acts on
    redrawTimer: null,
    refreshing: false,
    toastPending: false,
  };
  state.shown = state.backend.slice();
  const log = [];
  window.__guistateActionLog = log;
  window.__guistateGroundTruth = () => ({
    app: "feed",
    backend: state.backend.map((p) => p.id),
    shown: state.shown.map((p) => p.id),
    dialog_open: state.confirm !== null,
    refreshing: state.refreshing,
    redraw_pending: state.redrawTimer !== null,
    config,
  });
  function record(action, fields) { log.push(Object.assign({ action }, fields || {})); }

  const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
  const list = $("posts"), spinner = $("refresh_progress"), scrim = $("dialog_scrim"), toast = $("toast");
  if (params.get("scrim_dialog") === "1") {  // the dim layer itself is the dialog node (issue 23)
    const box = $("dialog");
    for (const name of ["role", "aria-modal", "aria-labelledby"]) {
      scrim.setAttribute(name, box.getAttribute(name));
      box.removeAttribute(name);
    }
  }

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function render() {
    // New nodes on every redraw: references to old rows go stale, as on Android.
    const rows = state.shown.map((post, position) => {
      const row = el("li", { class: "row", "data-testid": "post_row", "data-post-id": post.id });
      const avatar = el("div", { class: "avatar", "data-testid": "avatar", role: "img", "aria-label": `Avatar of ${post.author}` },
        post.author[0]);
      avatar.style.background = post.color;
      const body = el("div", { class: "body" });
      body.append(el("div", { class: "author", "data-testid": "author" }, post.author),
        el("div", { class: "text", "data-testid": "text" }, post.text));
      const del = el("button", { type: "button", "data-testid": "delete" }, "Delete");
      del.addEventListener("click", () => askDelete(position));
      row.append(avatar, body, del);
      return row;
    });
    list.replaceChildren(...rows);
  }

  function askDelete(position) {
    if (state.confirm !== null) return;
    state.confirm = position;
    $("dialog_message").textContent = `Delete post by ${state.shown[position].author}?`;
    scrim.hidden = false;
    history.pushState({ dialog: true }, "");  // so Back closes the dialog, as on a phone
    record("open_dialog", { dialog: "confirm_delete", author: state.shown[position].author });
  }

  function closeDialog(viaHistory) {
    scrim.hidden = true;
    state.confirm = null;
    if (!viaHistory && history.state && history.state.dialog) history.back();
  }

  function cancel(viaHistory) {
    if (state.confirm === null) return;
    closeDialog(viaHistory);
    record("dismiss_dialog", { dialog: "confirm_delete" });
  }

  function confirmDelete() {
    const position = state.confirm;
    closeDialog(false);
    if (position === null || position >= state.backend.length) return;  // stale row past the end: no-op
    const [post] = state.backend.splice(position, 1);
    record("delete_post", { post_id: post.id, author: post.author, position });
    state.toastPending = true;
    if (config.delay <= 0) redraw();
    else if (state.redrawTimer === null) state.redrawTimer = setTimeout(redraw, config.delay);
  }

  function redraw() {
    if (state.redrawTimer !== null) clearTimeout(state.redrawTimer);
    state.redrawTimer = null;
    state.shown = state.backend.slice();
    render();
    if (state.toastPending) {
      state.toastPending = false;
      toast.textContent = "Post deleted";
      toast.hidden = false;
      setTimeout(() => { toast.hidden = true; }, config.toast);
    }
  }

  function refresh() {
    if (state.refreshing) return;
    state.refreshing = true;
    spinner.hidden = false;
    record("refresh", { target: "feed/list" });
    setTimeout(() => {
      state.refreshing = false;
      spinner.hidden = true;
      redraw();
    }, config.refresh);
  }

  // Pull-to-refresh: a drag down that starts while the list is scrolled to the top.
  const pull = { startY: null, dy: 0 };
  function pullStart(y) { pull.startY = list.scrollTop <= 0 ? y : null; pull.dy = 0; }
  function pullMove(y, event) {
    if (pull.startY === null) return;
    pull.dy = y - pull.startY;
    if (pull.dy > 0 && list.scrollTop <= 0 && event.cancelable) event.preventDefault();
  }
  function pullEnd() {
    if (pull.startY !== null && pull.dy >= config.pull) refresh();
    pull.startY = null;
    pull.dy = 0;
  }
  list.addEventListener("touchstart", (e) => pullStart(e.touches[0].clientY), { passive: true });
  list.addEventListener("touchmove", (e) => pullMove(e.touches[0].clientY, e), { passive: false });
  list.addEventListener("touchend", pullEnd);
  list.addEventListener("touchcancel", () => { pull.startY = null; });
  list.addEventListener("pointerdown", (e) => { if (e.pointerType === "mouse") pullStart(e.clientY); });
  list.addEventListener("pointermove", (e) => { if (e.pointerType === "mouse") pullMove(e.clientY, e); });
  list.addEventListener("pointerup", (e) => { if (e.pointerType === "mouse") pullEnd(); });

  $("cancel_delete").addEventListener("click", () => cancel(false));
  $("confirm_delete").addEventListener("click", confirmDelete);
  scrim.addEventListener("click", (e) => { if (e.target === scrim) cancel(false); });
  window.addEventListener("popstate", () => cancel(true));

  render();
})();
