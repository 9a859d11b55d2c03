#!/usr/bin/env python3
"""Run every SQL example of README.md, in order, in the demo database.

    python3 test/readme/check.py [--demo test/demo.sql] [--keep] [README.md]

What it proves: a reader who loads the demo (test/demo.sh does it) and
then types the README's examples one after the other gets what the README
says, in a database with a UTF-8 locale -- the common default, whose
collation PostgreSQL does not treat as bytewise.  It connects with the usual
PGHOST/PGPORT/PGUSER, creates the scratch database ddb_readme (C.UTF-8 when
the server knows that locale, else en_US.UTF-8, else ICU's root collation),
loads the demo script into it, and then runs each ```sql block of
README.md with psql, in order, one session per block.

The README's conventions, which this checks:
  - a statement followed by a comment line "-- ERROR:  <message>" must fail
    with an error whose message starts with <message>; every other
    statement must succeed;
  - a ```text block that follows a ```sql block (with nothing but blank
    lines between) is that block's output as psql prints it without
    headers and row counts (EXPLAIN plans, say); it must match line for
    line, trailing blanks aside;
  - the demo script, loaded again afterwards (as the demo's next start
    does), keeps the grants the README made on its table app.
Other fences (```sh, ```) are not run.

Prints one line per block, then a summary; exits 1 when anything differed.
"""
import argparse
import os
import re
import subprocess
import sys

DB = "ddb_readme"


def blocks(text):
    """(lang, body, first line number) of every fenced block, in order."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```\s*([A-Za-z0-9_-]*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        lang, start, body = m.group(1), i + 1, []
        i += 1
        while i < len(lines) and not re.match(r"^```\s*$", lines[i]):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            sys.exit("README: the block opened at line %d is never closed" % start)
        out.append((lang, "\n".join(body), start, i + 1))
        i += 1
    return out


def psql(db, sql, extra=()):
    """Run sql in one psql session; returns (stdout, stderr)."""
    cmd = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=0", "-v", "VERBOSITY=default",
           "-P", "pager=off", "-d", db] + list(extra)
    p = subprocess.run(cmd, input=sql, capture_output=True, text=True)
    return p.stdout, p.stderr


def must(db, sql):
    p = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db],
                       input=sql, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("readme: %s failed:\n%s" % (sql.strip()[:200], p.stderr))
    return p.stdout.strip()


def make_database():
    must("postgres", "DROP DATABASE IF EXISTS %s" % DB)
    tries = [
        ("C.UTF-8", "TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8'"),
        ("en_US.UTF-8", "TEMPLATE template0 ENCODING 'UTF8' LOCALE 'en_US.UTF-8'"),
        ("ICU und", "TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'und'"),
    ]
    for name, opts in tries:
        p = subprocess.run(["psql", "-X", "-q", "-d", "postgres", "-c",
                            "CREATE DATABASE %s %s" % (DB, opts)],
                           capture_output=True, text=True)
        if p.returncode == 0:
            return name
    sys.exit("readme: cannot create a database with a UTF-8 locale (tried %s)"
             % ", ".join(t[0] for t in tries))


def expected_errors(sql):
    """The '-- ERROR:  ...' annotations of a block, in order."""
    return [m.group(1).strip() for m in re.finditer(r"^\s*-- ERROR:\s+(.*)$", sql, re.M)]


def normalize(text):
    lines = [l.rstrip() for l in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--demo", default=os.path.join(os.path.dirname(__file__), "..", "demo.sql"))
    ap.add_argument("--keep", action="store_true", help="keep the database ddb_readme")
    ap.add_argument("readme", nargs="?",
                    default=os.path.join(os.path.dirname(__file__), "..", "..", "README.md"))
    args = ap.parse_args()

    text = open(args.readme, encoding="utf-8").read()
    locale = make_database()
    coll = must(DB, "SELECT datcollate || ' / ' || coalesce(daticulocale, '-') FROM pg_database WHERE datname = current_database()")
    print("readme: database %s, locale %s (collate / ICU locale: %s)" % (DB, locale, coll))
    p = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", DB, "-f", args.demo],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("readme: the demo script failed:\n" + p.stderr)

    bs = blocks(text)
    failures = 0
    ran = 0
    for n, (lang, body, start, end) in enumerate(bs):
        if lang != "sql":
            continue
        ran += 1
        problems = []
        want_out = None
        if n + 1 < len(bs) and bs[n + 1][0] == "text":
            between = text.split("\n")[end:bs[n + 1][2] - 1]
            if all(not l.strip() for l in between):
                want_out = bs[n + 1][1]
        # with an expected output: aligned, no header, no row count
        extra = ["-t"] if want_out is not None else []
        out, err = psql(DB, body, extra)
        got_errors = [m.group(1).strip() for m in re.finditer(r"^(?:psql:[^:]*:\d+: )?ERROR:\s+(.*)$", err, re.M)]
        want_errors = expected_errors(body)
        if len(got_errors) != len(want_errors) or any(
                not g.startswith(w) for g, w in zip(got_errors, want_errors)):
            problems.append("errors: expected %s, got %s" % (want_errors or "none", got_errors or "none"))
        if want_out is not None and normalize(out) != normalize(want_out):
            problems.append("output differs from the text block after it:\n--- README\n%s\n--- psql\n%s"
                            % ("\n".join(normalize(want_out)), "\n".join(normalize(out))))
        if problems:
            failures += 1
            print("FAILED: README.md line %d:\n  %s" % (start, "\n  ".join(problems)))
            if err.strip():
                print("  stderr:\n" + "\n".join("    " + l for l in err.strip().split("\n")))
        else:
            print("ok: README.md line %d%s%s" % (start,
                  " (%d expected error%s)" % (len(want_errors), "s" if len(want_errors) > 1 else "") if want_errors else "",
                  " (output matches)" if want_out is not None else ""))

    # The demo's next start loads its script again, rebuilding app: the
    # grants the README made on it (to the endpoint's role) must stay.
    acl = ("SELECT coalesce(string_agg(a.grantee::regrole || ' ' || a.privilege_type, ', ' ORDER BY 1), '')"
           " FROM pg_class c, aclexplode(c.relacl) a"
           " WHERE c.oid = 'app'::regclass AND a.grantee <> c.relowner")
    before = must(DB, acl)
    p = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", DB, "-f", args.demo],
                       capture_output=True, text=True)
    after = must(DB, acl) if p.returncode == 0 else None
    if not before:
        failures += 1
        print("FAILED: the README grants nothing on app, so the demo's keeping grants is not checked")
    elif p.returncode != 0:
        failures += 1
        print("FAILED: the demo script, run again:\n" + p.stderr)
    elif after != before:
        failures += 1
        print("FAILED: the demo script, run again, dropped the grants on app:\n  before: %s\n  after:  %s"
              % (before, after or "none"))
    else:
        print("ok: the demo script, run again, keeps the grants on app (%s)" % before)

    if not args.keep:
        must("postgres", "DROP DATABASE %s" % DB)
    if ran == 0:
        print("readme: no ```sql blocks found in %s" % args.readme)
        return 1
    print("readme: %d SQL blocks, %d failed" % (ran, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
