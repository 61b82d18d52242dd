"""Cost of the visual oracle per 1080x2400 frame pair, against the floor and the alternatives.

Run: ``python benchmarks/oracle_bench.py [--repeat N] [--no-pixelmatch]``.
One OpenCV thread (the plugin runs beside the app under test on a 2-core machine). Absolute
times drift 20-40% between runs on this machine (MEASURED.md): read the ratios, which are
measured in the same run. Rows:
- floor: read both decoded frames once (cv2.norm INF);
- decode: one PNG decode (cv2.imdecode) -- the unavoidable cost of a fresh screenshot;
- oracle (decoded): `VisualOracle.compare` on decoded frames, nothing cached, no crop encoded;
- oracle (before cached): the step loop's case -- the before frame's 1/2-scale copy is kept;
- oracle + crops encoded: as above plus PNG encoding of every crop;
- after-action check: decode of the after frame + compare, before cached (budget 1.3x decode);
- identical bytes: compare of two frames with equal PNG bytes (no decode);
- SSIM: skimage structural_similarity(full=True) on grey, full scale and 1/4 scale;
- odiff: native CLI if on PATH; pixelmatch: the pure-Python port, on one pair only.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from collections.abc import Callable

import cv2
import numpy as np

from pytest_guistate.core.frame import Frame
from pytest_guistate.core.geometry import Box
from pytest_guistate.core.oracle import VisualOracle

W, H = 1080, 2400


def screen(seed: int) -> np.ndarray:
    """A busy phone screen (~350-400 KB as PNG, like the screens in MEASURED.md)."""
    rng = np.random.default_rng(seed)
    img = np.full((H, W, 3), 248, np.uint8)
    cv2.rectangle(img, (0, 0), (W, 72), (30, 30, 30), -1)
    cv2.rectangle(img, (0, 72), (W, 220), (170, 100, 30), -1)
    for i in range(12):
        top = 240 + i * 180
        colour = tuple(int(c) for c in rng.integers(40, 220, 3))
        cv2.circle(img, (100, top + 90), 60, colour, -1)
        for line in range(2):
            text = " ".join(str(rng.integers(1000, 99999)) for _ in range(4))
            cv2.putText(img, text, (190, top + 70 + 55 * line), cv2.FONT_HERSHEY_SIMPLEX, 1.1, (20, 20, 20), 2, 16)
        cv2.line(img, (0, top + 178), (W, top + 178), (225, 225, 225), 2)
    noise = rng.integers(0, 3, (H, W, 1), dtype=np.uint8)  # photo-like texture keeps the PNG realistic
    return cv2.add(img, np.repeat(noise, 3, axis=2))


def pairs() -> list[tuple[str, np.ndarray, np.ndarray]]:
    base = screen(1)
    button = base.copy()
    cv2.rectangle(button, (390, 2250), (690, 2370), (40, 160, 40), -1)
    removed = base.copy()
    removed[600 : 2400 - 180] = base[780:2400]  # a row removed: everything below shifts up
    dialog = base.copy()
    cv2.rectangle(dialog, (90, 900), (990, 1500), (255, 255, 255), -1)
    cv2.putText(dialog, "Delete message?", (150, 1050), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (0, 0, 0), 3)
    scrim = (base.astype(np.float32) * 0.4).astype(np.uint8)  # a dialog over a scrim: the oracle's dim path
    scrim[:72] = base[:72]
    scrim[900:1500, 90:990] = dialog[900:1500, 90:990]
    return [("button", base, button), ("row removed", base, removed), ("dialog", base, dialog),
            ("dialog over a scrim", base, scrim)]


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(samples)


def decoded(png: bytes, bgr: np.ndarray) -> Frame:
    frame = Frame(png=png)
    frame._bgr = bgr  # already decoded: what "frames already decoded" means in the budget
    return frame


def bench_pair(
    name: str,
    before: np.ndarray,
    after: np.ndarray,
    oracle: VisualOracle,
    repeat: int,
    add: Callable[[str, float], None],
) -> None:
    """All oracle rows for one frame pair (the floor and one decode measured beside them)."""
    png_b = cv2.imencode(".png", before)[1].tobytes()
    png_a = cv2.imencode(".png", after)[1].tobytes()
    add("floor: cv2.norm INF of both frames", median_ms(lambda: cv2.norm(before, after, cv2.NORM_INF), repeat))
    add("decode: one PNG (cv2.imdecode)", median_ms(lambda: Frame(png=png_a).bgr, repeat))
    add(
        "oracle, decoded frames, nothing cached",
        median_ms(lambda: oracle.compare(decoded(png_b, before), decoded(png_a, after)), repeat),
    )
    cached_before = decoded(png_b, before)
    cached_before.small(oracle.config.scale_divisor)
    add(
        "oracle, before cached (step loop)",
        median_ms(lambda: oracle.compare(cached_before, decoded(png_a, after)), repeat),
    )
    add(
        "oracle + all crops PNG-encoded",
        median_ms(lambda: [c.png for c in oracle.compare(cached_before, decoded(png_a, after)).crops], repeat),
    )
    add(
        "after-action check: decode after + compare",
        median_ms(lambda: oracle.compare(cached_before, Frame(png=png_a)), repeat),
    )
    add(
        "identical PNG bytes (no decode)",
        median_ms(lambda: oracle.compare(Frame(png=png_a), Frame(png=png_a)), repeat),
    )
    result = oracle.compare(cached_before, Frame(png=png_a))
    print(f"  {name:12s} verdict={result.verdict} regions={[r.raw.as_list() for r in result.regions]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--no-pixelmatch", action="store_true")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    oracle = VisualOracle()
    rows: dict[str, list[float]] = {}

    def add(name: str, ms: float) -> None:
        rows.setdefault(name, []).append(ms)

    for name, before, after in pairs():
        bench_pair(name, before, after, oracle, args.repeat, add)

    _, before, after = pairs()[0]
    grey_b, grey_a = cv2.cvtColor(before, cv2.COLOR_BGR2GRAY), cv2.cvtColor(after, cv2.COLOR_BGR2GRAY)
    try:
        from skimage.metrics import structural_similarity
    except ImportError:
        print("scikit-image not installed: SSIM rows skipped")
    else:
        add(
            "skimage SSIM full=True, full scale", median_ms(lambda: structural_similarity(grey_b, grey_a, full=True), 3)
        )
        small_b = cv2.resize(grey_b, (W // 4, H // 4), interpolation=cv2.INTER_AREA)
        small_a = cv2.resize(grey_a, (W // 4, H // 4), interpolation=cv2.INTER_AREA)
        add(
            "skimage SSIM full=True, 1/4 scale",
            median_ms(lambda: structural_similarity(small_b, small_a, full=True), 5),
        )
    if shutil.which("odiff"):
        print("odiff found on PATH but not benchmarked here (needs files and a process per pair)")
    else:
        print("odiff: not on PATH (native binary from npm; not installed here) -> no row")
    if not args.no_pixelmatch:
        try:
            from pixelmatch import pixelmatch
        except ImportError:
            print("pixelmatch not installed: row skipped")
        else:
            rgba_b = cv2.cvtColor(before, cv2.COLOR_BGR2RGBA).tobytes()
            rgba_a = cv2.cvtColor(after, cv2.COLOR_BGR2RGBA).tobytes()
            start = time.perf_counter()
            pixelmatch(rgba_b, rgba_a, W, H, threshold=0.1)
            add("pixelmatch (pure Python), 1 pair", (time.perf_counter() - start) * 1000.0)

    floor = statistics.median(rows["floor: cv2.norm INF of both frames"])
    decode = statistics.median(rows["decode: one PNG (cv2.imdecode)"])
    print(f"\n{'what (1080x2400, one thread)':46s} {'ms':>10s} {'x floor':>9s} {'x decode':>9s}")
    for name, values in rows.items():
        ms = statistics.median(values)
        print(f"{name:46s} {ms:10.2f} {ms / floor:9.1f} {ms / decode:9.2f}")
    bbox = Box(0, 0, W, H)
    print(f"\nscreen {bbox.width}x{bbox.height}; oracle config: {oracle.config}")


if __name__ == "__main__":
    main()
