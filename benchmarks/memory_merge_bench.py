"""Issue 27: what `guistate memory merge` costs for a CI fleet: runners x variants -> seconds and bytes.

Each runner's store holds a shared part (the downloaded memory, folded on merge) and its own new
variants (48x48 PNG crops, about the size learning stores). Prints the merge time, the output size
and the eviction count over the cap; timing is wall clock on a loaded machine: read it as an order of size.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_guistate.memory.merge import merge_stores
from pytest_guistate.memory.store import MemoryStore, NewPatch


def _crop(seed: int) -> bytes:
    rng = random.Random(seed)
    image = Image.new("RGB", (48, 48), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    for _ in range(12):
        x, y = rng.randrange(40), rng.randrange(40)
        image.paste((rng.randrange(256), rng.randrange(256), rng.randrange(256)), (x, y, x + 8, y + 8))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _runner(path: Path, runner: int, shared: int, own: int) -> None:
    with MemoryStore(path, max_entries=100_000, clock=lambda: 1_000_000.0 + runner) as store:
        for seed in [*range(shared), *range(100_000 * (runner + 1), 100_000 * (runner + 1) + own)]:
            store.add_patch(NewPatch(function=f"f{seed % 400}", app="com.example", png=_crop(seed), size=(48, 48),
                                     screen=(1080, 2400)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runners", type=int, default=4)
    parser.add_argument("--shared", type=int, default=1000, help="variants every runner downloaded")
    parser.add_argument("--own", type=int, default=500, help="variants each runner learnt itself")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [Path(tmp) / f"runner-{n}.sqlite" for n in range(args.runners)]
        for n, path in enumerate(inputs):
            _runner(path, n, args.shared, args.own)
        started = time.perf_counter()
        report = merge_stores(inputs, Path(tmp) / "merged.sqlite")
        seconds = time.perf_counter() - started
        size = (Path(tmp) / "merged.sqlite").stat().st_size
        in_size = sum(p.stat().st_size for p in inputs)
    print(f"{args.runners} runners x ({args.shared} shared + {args.own} own) variants: merge {seconds:.2f} s, "
          f"inputs {in_size / 1e6:.1f} MB -> output {size / 1e6:.1f} MB")
    print("\n".join(report.lines()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
