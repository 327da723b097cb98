"""Jaxprs in JAX's text format (`pretty_print`, `pp_eqn`).

A small document printer in the style of Wadler and Lindig ("strictly pretty"): a
document is text, breaks, nesting and groups. A group prints flat (each break as its
flat text) when its own flat text fits in the rest of the line, else its breaks become
newlines at the current nesting. JAX prints jaxprs the same way, so lines break where
JAX breaks them: a whole jaxpr on one line when it fits in 80 columns, an equation's
`[params]` one per line when they do not fit, binders filling lines.
"""

from __future__ import annotations

import collections

import numpy as np

from jaxlite.core import ClosedJaxpr, Jaxpr, Literal, Var

_LINE_WIDTH = 80


class _Brk:
    """A line break, printed as `text` when its group is flat."""

    __slots__ = ("text",)

    def __init__(self, text=" "):
        self.text = text


class _Nest:
    __slots__ = ("n", "child")

    def __init__(self, n, child):
        self.n = n
        self.child = child


class _Group:
    __slots__ = ("child",)

    def __init__(self, child):
        self.child = child


# A document is a str, a list (concatenation), or one of the three classes above.


def _fits(doc, width):
    """Whether `doc` printed flat takes at most `width` columns."""
    agenda = [doc]
    while agenda and width >= 0:
        d = agenda.pop()
        t = type(d)
        if t is str:
            width -= len(d)
        elif t is list:
            agenda.extend(reversed(d))
        elif t is _Brk:
            width -= len(d.text)
        else:
            agenda.append(d.child)
    return width >= 0


def _render(doc, width=_LINE_WIDTH):
    out = []
    col = 0
    stack = [(0, False, doc)]  # (indent, flat, doc)
    while stack:
        indent, flat, d = stack.pop()
        t = type(d)
        if t is str:
            out.append(d)
            col += len(d)
        elif t is list:
            stack.extend((indent, flat, c) for c in reversed(d))
        elif t is _Brk:
            if flat:
                out.append(d.text)
                col += len(d.text)
            else:
                out.append("\n" + " " * indent)
                col = indent
        elif t is _Nest:
            stack.append((indent + d.n, flat, d.child))
        else:
            stack.append((indent, flat or _fits(d.child, width - col), d.child))
    return "".join(out)


def _join(sep, docs):
    out = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return out


class _Namer:
    """Names variables a, b, ..., z, ba, bb, ... in order of first appearance.

    `shared` maps the jaxprs printed once, in a `let` prelude, to their names."""

    def __init__(self):
        self.names = {}
        self.count = 0
        self.shared = {}

    def fresh(self):
        name = _var_name(self.count)
        self.count += 1
        return name

    def __call__(self, v):
        if type(v) is Literal:
            return repr(v)
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = self.fresh()
        return name

    def binder(self, v):
        return f"{self(v)}:{v.aval.str_short()}"


def _var_name(i):
    letters = ""
    while True:
        letters = chr(ord("a") + i % 26) + letters
        i //= 26
        if i == 0:
            return letters


# Primitives whose `jaxpr` parameter is a call of the equation's operands (jit): JAX
# prints that jaxpr's inputs and outputs with the names of the equation's own operands
# and results, so a nested jit reads like the code around it.
pp_call_primitives: set = set()


def _pp_vars(names, sep=""):
    return _Nest(2, _Group(_join([sep, _Group(_Brk())], names)))


def _pp_param(key, value, namer, eqn):
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        shared = namer.shared.get(_open(value))
        if shared is not None:
            return shared
        if eqn is not None and key == "jaxpr" and eqn.primitive in pp_call_primitives:
            _share_call_names(value, eqn, namer)
        return _pp_jaxpr_doc(value, namer)
    if isinstance(value, tuple) and any(
        isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value
    ):
        docs = [_pp_param(key, v, namer, None) for v in value]
        return _Group([_Nest(2, ["(", _Brk(""), _join(_Brk(), docs)]), _Brk(""), ")"])
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, str):
        return value
    if callable(value) and hasattr(value, "__name__") and not isinstance(value, type):
        return value.__name__
    return repr(value)


def _share_call_names(closed, eqn, namer):
    """Give a called jaxpr's inputs and outputs the names of the equation's operands
    and results (unless a name would repeat among the inputs)."""
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    taken = set()
    for inner, outer in zip(jaxpr.invars, eqn.invars):
        name = namer.names.get(outer) if type(outer) is Var else None
        if name is not None and name not in taken:
            namer.names[inner] = name
            taken.add(name)
    own = set(jaxpr.invars) | set(jaxpr.constvars)
    for inner, outer in zip(jaxpr.outvars, eqn.outvars):
        if type(inner) is Var and inner not in own and inner not in namer.names:
            namer.names[inner] = namer.names.get(outer, "_")


# pp_eqn_rules[prim](eqn, operand_names, binders) -> document: the equations JAX
# prints in a form of their own (reads and writes of references, `b:f32[] <- a[...]`),
# given the names of the operands and the `name:type` binders of the results.
pp_eqn_rules: dict = {}


def _pp_eqn_doc(eqn, namer, used):
    lhs = []
    for v in eqn.outvars:
        name = namer.names.get(v)
        if name is None:
            name = "_" if used is not None and v not in used else namer(v)
        lhs.append(f"{name}:{v.aval.str_short()}")
    rule = pp_eqn_rules.get(eqn.primitive)
    if rule is not None:
        return rule(eqn, [namer(x) for x in eqn.invars], lhs)
    doc = [_pp_vars(lhs), " = "] if lhs else []
    doc.append(eqn.primitive.name)
    if eqn.params:
        kvs = [[f"{k}=", _pp_param(k, v, namer, eqn)] for k, v in eqn.params.items()]
        doc.append(
            _Group([_Nest(2, ["[", _Brk(""), _join(_Brk(), kvs)]), _Brk(""), "]"])
        )
    doc += [" ", _pp_vars([namer(x) for x in eqn.invars])]
    return doc


def _used_vars(jaxpr):
    used = {x for eqn in jaxpr.eqns for x in eqn.invars if type(x) is Var}
    used.update(v for v in jaxpr.outvars if type(v) is Var)
    return used


def _pp_jaxpr_doc(jaxpr, namer):
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    used = _used_vars(jaxpr)
    consts = _pp_vars([namer.binder(v) for v in jaxpr.constvars])
    invars = _pp_vars([namer.binder(v) for v in jaxpr.invars])
    eqns = [_pp_eqn_doc(e, namer, used) for e in jaxpr.eqns]
    outs = [namer(v) for v in jaxpr.outvars]
    close = ",)" if len(outs) == 1 else ")"
    body = ["{ lambda ", consts, "; ", invars, ". let"]
    body += [_Nest(2, [_Brk(), _join(_Brk("; "), eqns)]), _Brk(), "in ("]
    body += [_pp_vars(outs, ","), close]
    return _Group([_Nest(2, body), " }"])


def pp_eqn(eqn):
    """One equation in JAX's text format (variables named from `a` in this equation)."""
    return _render(_pp_eqn_doc(eqn, _Namer(), None))


def _open(jaxpr):
    return jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr


def _sub_jaxprs(params):
    for value in params.values():
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            if isinstance(v, (Jaxpr, ClosedJaxpr)):
                yield _open(v)


def _shared_jaxprs(top):
    """The sub-jaxprs that occur more than once (the same object) or have more than 10
    equations, in breadth-first order, with unique names: the `name` of the equation
    that calls them (`<lambda>` becomes `lambda`), else `jaxpr`; a repeated name gets a
    counter (`lambda1`)."""
    counts, names = {}, {}
    queue = collections.deque([top])
    while queue:
        jaxpr = queue.popleft()
        counts[jaxpr] = counts.get(jaxpr, 0) + 1
        if jaxpr is not top and len(jaxpr.eqns) > 10:  # big ones print apart too
            counts[jaxpr] += 1
        for eqn in jaxpr.eqns:
            name = eqn.params.get("name")
            for sub in _sub_jaxprs(eqn.params):
                if isinstance(name, str):
                    names[sub] = name.strip("<>")
                queue.append(sub)
    shared, taken = {}, collections.Counter()
    for jaxpr, count in counts.items():
        if count == 1:
            continue
        name = names.get(jaxpr, "jaxpr")
        seen = taken[name]
        taken[name] += 1
        if seen:
            name += str(seen)
            taken[name] += 1
        shared[jaxpr] = name
    return shared


def pretty_print(jaxpr):
    """A jaxpr in JAX's text format. Sub-jaxprs used more than once (a jitted function
    called twice) or longer than 10 equations are printed once, first, as
    `let name = { lambda ... } in`."""
    jaxpr = _open(jaxpr)
    namer = _Namer()
    namer.shared = _shared_jaxprs(jaxpr)
    docs = []
    for sub, name in namer.shared.items():
        docs.append(_render([f"let {name} = ", _pp_jaxpr_doc(sub, namer), " in"]))
    docs.append(_render(_pp_jaxpr_doc(jaxpr, namer)))
    return "\n".join(docs)
