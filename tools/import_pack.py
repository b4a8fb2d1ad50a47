"""Copy a staged problem's mistakes and alternatives into problems/ and write its `mistakes.expect`."""
import re
import shutil
import sys
from pathlib import Path

KINDS = ("non_finite", "dtype", "shape", "tolerance", "type", "mutation", "raises", "exception")
root = Path(__file__).resolve().parent.parent / "problems"
for pid in sys.argv[2:]:
    src = Path(sys.argv[1]) / pid
    for part in ("mistakes", "alternatives"):
        dst = root / part / pid
        dst.mkdir(parents=True, exist_ok=True)
        for f in sorted((src / part).glob("*.py")):
            shutil.copy(f, dst / f.name)
    expect = {}
    for f in sorted((root / "mistakes" / pid).glob("*.py")):
        kind = next(k for k in KINDS if f.name.startswith(k + "_"))
        expect[f.name] = kind
    spec = root / f"{pid}.yaml"
    text = spec.read_text()
    block = "  expect:\n" + "".join(f"    {k}: {v}\n" for k, v in expect.items())
    text = re.sub(r"  expect: \{\}\n", block, text)
    spec.write_text(text)
    print(pid, expect)
