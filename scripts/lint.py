#!/usr/bin/env python3
"""The project's habits, checked (docs/contributing.md, "Habits"): run by scripts/test.sh.

  scripts/lint.py [ROOT]   (default: the repository)

Fails (exit 1, one line per offence, "path:line: what") on
  - a production C++ file over 600 lines;
  - a production function whose body is over 80 lines, or that takes over 6 parameters
    (definitions at column 0, as clang-format lays out the project's code);
  - a finding kind named (report::kind::...) in controller/ outside controller/verdict/ and the
    trust boundary (controller/sweep/trust.cc), or in cli/: the sweep measures, the verdict
    judges, the client asks;
  - a statistical constant (a spread, noise or chance level) defined in controller/verdict/
    outside robust_stats.h;
  - a test reading TEST_TMPDIR itself rather than through the test library (tests/testing).
Production files: *.cc and *.h under base, probes, report, controller, agent and cli, but
tests (*_test.cc), fuzz targets, fakes and test libraries (testing.h).
"""
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 6
PRODUCTION_DIRS = ("base", "probes", "report", "controller", "agent", "cli")
KEYWORDS = {"if", "for", "while", "switch", "return", "ABSL_GUARDED_BY", "TEST_CASE", "TEST",
            "SECTION", "ABSL_EXCLUSIVE_LOCKS_REQUIRED", "ABSL_LOCKS_EXCLUDED"}


def production(path):
    name = os.path.basename(path)
    return (name.endswith((".cc", ".h")) and "_test" not in name and "fuzz" not in name
            and "fake" not in name and name != "testing.h")


def sources(root):
    for top in PRODUCTION_DIRS + ("tests",):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if not d.startswith(("bazel-", "."))]
            for name in sorted(filenames):
                if name.endswith((".cc", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def definition_start(line):
    return (line and not line[0].isspace() and "(" in line
            and not line.startswith(("#", "//", "namespace", "}", "using ", "typedef "))
            and not line.rstrip().endswith(";"))


def function_lengths(lines):
    """(line, name, body lines) of each function defined at column 0."""
    i = 0
    while i < len(lines):
        if definition_start(lines[i]):
            j = i
            while (j < len(lines) and j < i + 8 and lines[j].strip()
                   and not lines[j].rstrip().endswith(("{", ";", "}"))):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                while k < len(lines) and lines[k].rstrip() != "}":
                    k += 1
                head = re.sub(r"\(.*", "", lines[i]).split()
                yield i + 1, (head[-1] if head else lines[i][:40]), k - j - 1
                i = k
        i += 1


def raw_string_lines(lines):
    """The lines inside raw string literals (SQL, templates): no code there."""
    end, mask = None, []
    for line in lines:
        mask.append(end is not None)
        rest = line
        while True:
            if end is None:
                m = re.search(r'R"([^(\s]*)\(', rest)
                if not m:
                    break
                end, rest = ")" + m.group(1) + '"', rest[m.end():]
            else:
                k = rest.find(end)
                if k < 0:
                    break
                end, rest = None, rest[k + len(end):]
    return mask


def parameter_counts(lines, header):
    """(line, name, parameters) of each function declared or defined at column 0, or, in a
    header, declared as a class's member (two spaces in)."""
    raw = raw_string_lines(lines)
    for i, line in enumerate(lines):
        stripped = line.strip()
        if raw[i] or not stripped or "(" not in stripped:
            continue
        if stripped.startswith(("#", "//", "}", "namespace", "return ")):
            continue
        if line[0].isspace() and not (header and re.match(r"^  [^ ]", line)):
            continue
        sig = " ".join(x.strip() for x in lines[i:i + 10])
        m = re.match(r"[^(=]*?([A-Za-z_][\w:~]*)\s*\(", sig)
        if not m or m.group(1) in KEYWORDS or m.group(1).isupper():
            continue
        start = sig.index("(", m.start(1))
        depth, k = 0, start
        while k < len(sig):
            depth += sig[k] == "("
            depth -= sig[k] == ")"
            if depth == 0:
                break
            k += 1
        body, rest = sig[start + 1:k], sig[k + 1:k + 60]
        if not re.match(r"\s*(const\s*)?(override\s*)?(noexcept\s*)?(final\s*)?(->[^{;]*)?\s*[{;:]"
                        r"|\s*(const\s*)?(override\s*)?$", rest):
            continue
        depth, n = 0, (1 if body.strip() and body.strip() != "void" else 0)
        for ch in body:
            if ch in "(<[{":
                depth += 1
            elif ch in ")>]}":
                depth -= 1
            elif ch == "," and depth == 0:
                n += 1
        yield i + 1, m.group(1), n


def check(root):
    problems = []
    for path in sources(root):
        with open(os.path.join(root, path), errors="replace") as f:
            text = f.read()
        lines = text.split("\n")
        if path.startswith("tests/") or not production(path):
            if "getenv(\"TEST_TMPDIR\")" in text and not path.startswith("tests/testing/"):
                problems.append(f"{path}: reads TEST_TMPDIR itself: use testing::TestPath or "
                                "testing::TempDir (tests/testing/testing.h)")
            continue
        if len(lines) - 1 > MAX_FILE_LINES:
            problems.append(f"{path}: {len(lines) - 1} lines, more than {MAX_FILE_LINES}: one "
                            "concept a file")
        if path.endswith(".cc"):
            for line, name, n in function_lengths(lines):
                if n > MAX_FUNCTION_LINES:
                    problems.append(f"{path}:{line}: {name} is {n} lines long, more than "
                                    f"{MAX_FUNCTION_LINES}")
        seen = set()
        for line, name, n in parameter_counts(lines, path.endswith(".h")):
            if n > MAX_PARAMETERS and (name, line) not in seen:
                seen.add((name, line))
                problems.append(f"{path}:{line}: {name} takes {n} parameters, more than "
                                f"{MAX_PARAMETERS}: pass a struct")
        judged_here = path.startswith("controller/verdict/") or path == "controller/sweep/trust.cc"
        if path.startswith(("controller/", "cli/")) and not judged_here:
            for i, l in enumerate(lines):
                if re.search(r"\bkind::k[A-Z]\w*", l) and not l.lstrip().startswith("//"):
                    problems.append(f"{path}:{i + 1}: names a finding kind: a rule belongs in "
                                    "controller/verdict/ (docs/verdicts.md, \"Adding or changing "
                                    "a rule\")")
        if path.startswith("controller/verdict/") and not path.endswith("robust_stats.h"):
            for i, l in enumerate(lines):
                if re.search(r"constexpr\s+(double|float)\s+k\w*(Spread|Noise|Chance|Sigma|Mad)\w*\s*=", l):
                    problems.append(f"{path}:{i + 1}: a statistical constant: define it once, in "
                                    "controller/verdict/robust_stats.h")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.abspath(root))
    for p in problems:
        print(p)
    print(f"lint: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
