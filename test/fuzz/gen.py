#!/usr/bin/env python3
"""Generate random and mutated DynamoDB expressions for the ddb fuzz test.

Writes COPY text-format rows: id, kind, expression, item, names, vals,
expect -- item, names and vals jsonb text or \\N.  Kinds: c = condition,
u = update, p = projection, k = key condition, t = typed JSON item (in the
expression column), m = an update whose result a reference model computed
(expect: the new item as JSON, or ERROR when the model says DynamoDB
rejects it).  Most cases are grammatical with random placeholders and
values; a share is mutated (spans deleted, duplicated, swapped, tokens
inserted) so the parser sees near-misses, and a few are pathological (deep
nesting, oversized text, huge indexes).

The reference model (model_update) is deliberately small and independent
of ddb's code: top-level attributes only, SET with values, paths, + and -,
if_not_exists and list_append, REMOVE, and ADD of numbers, following
DynamoDB's UpdateExpression rules (operands read the item as it was before
the update; a missing operand, or arithmetic or list_append on the wrong
type, is an error).
"""
import base64
import decimal
import json
import random
import re
import sys

NAMES = ["a", "b", "c", "pk", "sk", "x", "y", "l", "m", "s", "n", "tags",
         "nums", "bin", "deep", "_u", "A1"]
RESERVED = ["name", "size", "status", "Data", "ttl", "key", "value"]
ODD_NAMES = ["a.b", "my attr", "name", "$B", "é", "x" * 300, "pk"]
TOKENS = ["(", ")", "[", "]", ",", ".", "=", "<>", "<", ">=", "+", "-",
          "AND", "OR", "NOT", "BETWEEN", "IN", "SET", "REMOVE", "ADD",
          "DELETE", ":", "#", ":v0", "#n0", "size(", "attribute_exists(",
          "begins_with(", "contains(", "if_not_exists(", "list_append(",
          "attribute_type(", "9999999999", "[0]", "é", "'", '"', "\\",
          "$", "  ", "\t", "\n", "🙂", "0", "a", ":", "::", "##"]
FUNCS1 = ["attribute_exists", "attribute_not_exists"]
FUNCS2 = ["begins_with", "contains", "attribute_type"]
CMPS = ["=", "<>", "<", "<=", ">", ">="]
TYPES = ["S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS", "X", ""]


def rstr():
    return random.choice(["", "a", "ab", "héllo", "CUST#42", "🙂x", "vip",
                          "AQID", "Zed", "x" * random.randint(0, 50)])


def rnum():
    if random.random() < 0.05:   # outside DynamoDB's range or precision
        return random.choice([10 ** 126, 1e-131, 123456789012345678901234567890123456789])
    return random.choice([0, 1, -1, 37, 2.5, 1e-5, 10 ** 20, 1.5e125,
                          random.randint(-1000, 1000), random.random()])


def b64(valid=True):
    if valid or random.random() < 0.7:
        return base64.b64encode(bytes(random.randint(0, 255)
                                      for _ in range(random.randint(0, 6)))).decode()
    return random.choice(["not base64", "AQI", "A Q==", "====", "é"])


def rsetlen():
    return 0 if random.random() < 0.05 else random.randint(1, 4)


def rvalue(depth=0):
    k = random.randint(0, 12 if depth < 4 else 5)
    if k == 0:
        return rstr()
    if k == 1:
        return rnum()
    if k == 2:
        return random.choice([True, False])
    if k == 3:
        return None
    if k == 4:
        return {"$B": b64(random.random() < 0.97)}
    if k == 5:
        return {"$SS": list({rstr() for _ in range(rsetlen())})}
    if k == 6:
        return {"$NS": list({rnum() for _ in range(rsetlen())})}
    if k == 7:
        return {"$BS": list({b64(random.random() < 0.97) for _ in range(rsetlen())})}
    if k in (8, 9):
        return [rvalue(depth + 1) for _ in range(random.randint(0, 4))]
    if k == 10:
        return {"$M": {random.choice(NAMES): rvalue(depth + 1)}}
    return {random.choice(NAMES + ["$B", "$SS"]): rvalue(depth + 1)
            for _ in range(random.randint(0, 4))}


def ritem():
    r = random.random()
    if r < 0.1:
        return None
    if r < 0.13:
        return [1, 2]
    item = {"pk": "p"}
    for _ in range(random.randint(0, 8)):
        item[random.choice(NAMES + RESERVED)] = rvalue()
    return item


def rname():
    r = random.random()
    if r < 0.25:
        return "#n%d" % random.randint(0, 3)
    if r < 0.26:
        return random.choice(RESERVED)
    return random.choice(NAMES)


def rpath():
    p = rname()
    for _ in range(random.choice([0, 0, 1, 1, 2, 3])):
        if random.random() < 0.5:
            p += "." + rname()
        else:
            p += "[%d]" % random.choice([0, 1, 2, 5, 0, 1, 2, 99999999999 if random.random() < 0.1 else 3])
    return p


def rval():
    return ":v%d" % random.randint(0, 5)


def roperand():
    r = random.random()
    if r < 0.45:
        return rpath()
    if r < 0.9:
        return rval()
    return "size(%s)" % rpath()


def rcond(depth=0):
    r = random.random() if depth < 5 else random.random() * 0.6
    if r < 0.25:
        return "%s %s %s" % (roperand(), random.choice(CMPS), roperand())
    if r < 0.32:
        return "%s BETWEEN %s AND %s" % (roperand(), roperand(), roperand())
    if r < 0.4:
        return "%s IN (%s)" % (roperand(), ", ".join(roperand() for _ in range(random.randint(1, 4))))
    if r < 0.5:
        return "%s(%s)" % (random.choice(FUNCS1), rpath())
    if r < 0.6:
        return "%s(%s, %s)" % (random.choice(FUNCS2), rpath(), roperand())
    if r < 0.72:
        return "%s %s %s" % (rcond(depth + 1), random.choice(["AND", "OR", "and", "or"]), rcond(depth + 1))
    if r < 0.82:
        return "NOT " + rcond(depth + 1)
    return "(" + rcond(depth + 1) + ")"


def rsetop(depth=0):
    r = random.random() if depth < 3 else 0
    if r < 0.2:
        return rpath()
    if r < 0.7:
        return rval()
    if r < 0.85:
        return "if_not_exists(%s, %s)" % (rpath(), rsetop(depth + 1))
    return "list_append(%s, %s)" % (rsetop(depth + 1), rsetop(depth + 1))


def rupdate():
    clauses = random.sample(["SET", "REMOVE", "ADD", "DELETE"], random.choice([1, 1, 2, 4]))
    out = []
    for c in clauses:
        acts = []
        for _ in range(random.choice([1, 1, 2, 3])):
            if c == "SET":
                v = rsetop()
                if random.random() < 0.3:
                    v += " %s %s" % (random.choice("+-"), rsetop())
                acts.append("%s = %s" % (rpath(), v))
            elif c == "REMOVE":
                acts.append(rpath())
            else:
                acts.append("%s :%s%d" % (rpath(), c[0].lower(), random.randint(0, 2)))
        out.append(c + " " + ", ".join(acts))
    return " ".join(out)


def rprojection():
    return ", ".join(rpath() for _ in range(random.randint(1, 5)))


def rkeycond():
    """A key condition on pk/sk, or any condition (mostly rejected)."""
    if random.random() < 0.3:
        return rcond()
    sk = random.choice(["sk = :v1", "sk < :v1", "sk >= :v1", "sk BETWEEN :v1 AND :v2",
                        "begins_with(sk, :v1)", "#n0 > :v1", "sk <> :v1"])
    parts = ["pk = :v0"] + ([sk] if random.random() < 0.7 else [])
    random.shuffle(parts)
    return " AND ".join(parts)


def rtyped():
    """Typed JSON (as the expression column), valid or mangled."""
    def tv(depth=0):
        t = random.choice(["S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS", "X"])
        if t == "S":
            return {"S": rstr()}
        if t == "N":
            return {"N": random.choice(["1", "-2.50", "1e3", "1e126", "abc", "", "+1",
                                        "0.000", "1e99999", ".5", "5."])}
        if t == "B":
            return {"B": b64(random.random() < 0.9)}
        if t == "BOOL":
            return {"BOOL": random.choice([True, False, "true"])}
        if t == "NULL":
            return {"NULL": random.choice([True, False])}
        if t == "L":
            return {"L": [tv(depth + 1) for _ in range(random.randint(0, 3 if depth < 4 else 0))]}
        if t == "M":
            return {"M": {random.choice(NAMES + ["$B"]): tv(depth + 1)
                          for _ in range(random.randint(0, 3 if depth < 4 else 0))}}
        if t == "SS":
            return {"SS": list({rstr() for _ in range(rsetlen())})}
        if t == "NS":
            return {"NS": list({str(random.randint(0, 5)) for _ in range(rsetlen())})}
        if t == "BS":
            return {"BS": list({b64() for _ in range(rsetlen())})}
        return random.choice([{}, {"S": "a", "N": "1"}, "plain", {"X": 1}])
    item = {random.choice(NAMES): tv() for _ in range(random.randint(0, 5))}
    return json.dumps(item)


# ---------------------------------------------------------------------------
# The reference model for kind m
# ---------------------------------------------------------------------------
MODEL_NAMES = ["a", "b", "c", "n", "m", "l", "s"]
decimal.getcontext().prec = 60


class ModelError(Exception):
    pass


def mvalue():
    """A value of the model: numbers as Decimal, no sets or binaries."""
    k = random.randint(0, 7)
    if k <= 2:
        return decimal.Decimal(random.choice(["0", "1", "-1", "2.5", "10", "0.1", "-3.75", "42"]))
    if k == 3:
        return random.choice(["", "x", "héllo", "CUST#42"])
    if k == 4:
        return random.choice([True, False, None])
    if k == 5:
        return [mvalue() for _ in range(random.randint(0, 3))]
    if k == 6:
        return {random.choice(MODEL_NAMES): decimal.Decimal(random.randint(-5, 5))}
    return decimal.Decimal(random.randint(-100, 100))


def is_num(v):
    return isinstance(v, decimal.Decimal)


def model_update(item, actions, vals):
    """Apply [(clause, target, operand tree)] to item; raises ModelError."""
    old = dict(item)
    new = dict(item)

    def operand(o):
        kind, x = o[0], o[1:]
        if kind == "val":
            return vals[x[0]]
        if kind == "path":
            if x[0] not in old:
                raise ModelError("missing operand")
            return old[x[0]]
        if kind == "ifne":
            return old[x[0]] if x[0] in old else operand(x[1])
        if kind == "append":
            a, b = operand(x[0]), operand(x[1])
            if not isinstance(a, list) or not isinstance(b, list):
                raise ModelError("list_append of a non-list")
            return a + b
        if kind in "+-":
            a, b = operand(x[0]), operand(x[1])
            if not is_num(a) or not is_num(b):
                raise ModelError("arithmetic on a non-number")
            return a + b if kind == "+" else a - b
        raise AssertionError(kind)

    for clause, target, o in actions:
        if clause == "SET":
            new[target] = operand(o)
        elif clause == "REMOVE":
            new.pop(target, None)
        elif clause == "ADD":
            v = operand(o)
            if target not in old:
                new[target] = v
            elif is_num(old[target]):
                new[target] = old[target] + v
            else:
                raise ModelError("ADD to a non-number")
    return new


def mjson(v):
    """JSON text of a model value, numbers written exactly."""
    if is_num(v):
        return format(v.normalize() if v != 0 else decimal.Decimal(0), "f")
    if isinstance(v, list):
        return "[" + ", ".join(mjson(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + mjson(x) for k, x in v.items()) + "}"
    return json.dumps(v, ensure_ascii=False)


def model_case():
    """(expression, item, vals, expected new item or 'ERROR'), all as text.

    Only forms DynamoDB documents: SET t = operand, operand + or - operand,
    or list_append(operand, operand), where an operand is a value, a path
    or if_not_exists(path, value); REMOVE t; ADD t number.  Targets are
    distinct; operands may name targets (they read the old item).
    """
    item = {"pk": "p"}
    for name in random.sample(MODEL_NAMES, random.randint(0, 5)):
        item[name] = mvalue()
    targets = random.sample(MODEL_NAMES, random.randint(1, 4))
    vals = {}
    clauses = {"SET": [], "REMOVE": [], "ADD": []}
    actions = []

    def val(v=None):
        ph = ":v%d" % len(vals)
        vals[ph] = mvalue() if v is None else v
        return ("val", ph), ph

    def operand():
        r = random.random()
        if r < 0.45:
            return val()
        name = random.choice(MODEL_NAMES)
        if r < 0.8:
            return ("path", name), name
        o, ph = val()
        return ("ifne", name, o), "if_not_exists(%s, %s)" % (name, ph)

    for t in targets:
        clause = random.choice(["SET", "SET", "REMOVE", "ADD"])
        if clause == "SET":
            r = random.random()
            a, ta = operand()
            if r < 0.5:
                o, text = a, ta
            else:
                b, tb = operand()
                if r < 0.8:
                    op = random.choice("+-")
                    o, text = (op, a, b), "%s %s %s" % (ta, op, tb)
                else:
                    o, text = ("append", a, b), "list_append(%s, %s)" % (ta, tb)
            actions.append(("SET", t, o))
            clauses["SET"].append("%s = %s" % (t, text))
        elif clause == "REMOVE":
            actions.append(("REMOVE", t, None))
            clauses["REMOVE"].append(t)
        else:
            o, ph = val(decimal.Decimal(random.choice(["1", "-2", "0.5", "7"])))
            actions.append(("ADD", t, o))
            clauses["ADD"].append("%s %s" % (t, ph))
    parts = [c + " " + ", ".join(a) for c, a in clauses.items() if a]
    random.shuffle(parts)
    try:
        expect = mjson(model_update(item, actions, vals))
    except ModelError:
        expect = "ERROR"
    # DynamoDB refuses an empty ExpressionAttributeValues: none at all then
    return " ".join(parts), mjson(item), mjson(vals) if vals else None, expect


def mutate(s):
    for _ in range(random.randint(1, 3)):
        if not s:
            s = random.choice(TOKENS)
            continue
        i = random.randrange(len(s))
        j = min(len(s), i + random.randint(1, 6))
        m = random.randint(0, 3)
        if m == 0:
            s = s[:i] + s[j:]
        elif m == 1:
            s = s[:i] + s[i:j] + s[i:]
        elif m == 2:
            s = s[:i] + random.choice(TOKENS) + s[i:]
        else:
            k = random.randrange(len(s))
            a, b = sorted((i, k))
            s = s[:a] + s[b:b + 3] + s[a + 3:b] + s[a:a + 3] + s[b + 3:]
    return s


def pathological(kind):
    r = random.randint(0, 5)
    if r == 0:
        return "(" * 3000 + "a = :v0" + ")" * 3000
    if r == 1:
        return "NOT " * 1000 + "a = :v0"
    if r == 2:
        return "a" + ".b" * 2000
    if r == 3:
        return "SET a = " + "list_append(" * 500 + ":v0" + ", :v0)" * 500
    if r == 4:
        return "a IN (" + ", ".join([":v0"] * 150) + ")"
    return "a = :v0 AND " * 400 + "a = :v0"


def enc(x):
    if x is None:
        return "\\N"
    if not isinstance(x, str):
        x = json.dumps(x, ensure_ascii=False)
    return (x.replace("\\", "\\\\").replace("\t", "\\t")
             .replace("\n", "\\n").replace("\r", "\\r"))


def main():
    n = int(sys.argv[1])
    random.seed(int(sys.argv[2]) if len(sys.argv) > 2 else None)
    out = sys.stdout
    for i in range(n):
        kind = random.choice("cccuuupppktmm")
        if kind == "m":
            expr, item, vals, expect = model_case()
            out.write("\t".join([str(i), kind, enc(expr), enc(item), "\\N",
                                 enc(vals), enc(expect)]) + "\n")
            continue
        expr = {"c": rcond, "u": rupdate, "p": rprojection, "k": rkeycond,
                "t": rtyped}[kind]()
        r = random.random()
        if r < 0.35 and kind != "t":
            expr = mutate(expr)
        elif r < 0.37:
            expr = pathological(kind)
        names = {}
        vals = {}
        for ph in sorted(set(re.findall(r"#[A-Za-z0-9_]+", expr))):
            if random.random() < 0.95:
                names[ph] = random.choice(NAMES + ODD_NAMES)
        for ph in sorted(set(re.findall(r":[A-Za-z0-9_]+", expr))):
            if random.random() < 0.95:
                vals[ph] = rvalue()
                if ph.startswith(":a") and random.random() < 0.97:    # ADD
                    vals[ph] = random.choice([rnum(), {"$SS": list({"a", rstr()})}, {"$NS": [1, 2]}])
                if ph.startswith(":d") and random.random() < 0.97:    # DELETE
                    vals[ph] = random.choice([{"$SS": list({"a", rstr()})}, {"$NS": [1]}])
        if random.random() < 0.01:
            names[random.choice(list(names) or ["#e"])] = ""
        if random.random() < 0.05:
            names["#unused"] = "z"
        if random.random() < 0.05:
            vals[":unused"] = 1
        if random.random() < 0.02:
            names = {"bad": 1}
        names = names or (None if random.random() < 0.98 else {})
        vals = vals or (None if random.random() < 0.98 else {})
        if kind in "pt":
            vals = None
        out.write("\t".join([str(i), kind, enc(expr), enc(ritem()),
                             enc(names), enc(vals), "\\N"]) + "\n")


if __name__ == "__main__":
    main()
