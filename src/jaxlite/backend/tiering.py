"""When a loop runs natively: the tiering policy between the NumPy and native backends.

The NumPy backend is the first tier: it starts in microseconds, and straight-line code
over arrays is already NumPy's vectorised loops. What it cannot do fast is a loop over
small state, where every equation of the body costs a NumPy call (~1 µs) per
iteration. The native backend runs such loops at machine speed, but an LLVM compile
costs tens to hundreds of milliseconds. So a loop (a `scan` or `while` equation) moves to native code once
the time it has spent on the NumPy tier reaches what compiling it would cost: the
classic rent-or-buy rule, which never spends more than twice the better choice.

Work is counted in equation executions (iterations × equations of the body, inner
loops included), at about a microsecond each on the NumPy tier. A compile costs about
`HOT_BASE + HOT_PER_EQUATION × (equations in the loop)` of them: LLVM's time grows
with the code (measured: 10-40 ms for a loop of a few dozen equations, 100-300 ms for
several hundred, as in a Metropolis step with its random numbers). A `scan` knows its
length, so a long one is compiled before its first iteration; a short one is counted
across calls. A `while` loop counts its iterations as it runs and, when it turns hot, continues from
its current carry in native code (on-stack replacement: a while loop restarted from
any carry computes the same).

A jitted function's whole jaxpr tiers the same way (`TieredFunction`): its calls'
NumPy time is rent, measured, and once it reaches the compile cost (and the function
has been called at least `MIN_CALLS` times) the jaxpr is compiled natively.
Straight-line code does not always gain from that (NumPy's BLAS beats a native loop
nest on a large product; a function that mostly calls the host gains nothing), so
the two tiers then take turns for a few calls, and native code is kept only if its
best time beats the NumPy tier's; otherwise the function stays on NumPy for good. Either way the executable's `entry` becomes the chosen function itself, so a
decided function costs nothing extra per call. (Values may then differ from the
NumPy tier's in the last bits: native code computes transcendental functions with
XLA's float32 kernels, as JAX does, where NumPy calls libm.)

`jaxlite_backend` selects the policy: "auto" (this), "native" (every loop natively
from its first call, and `backend.compile` compiles whole jaxprs natively), "numpy"
(never). A loop the native backend cannot compile stays on the NumPy tier, once
checked.
"""

from __future__ import annotations

from time import perf_counter_ns

from jaxlite.backend import native
from jaxlite.backend.lowering import host_call_primitives
from jaxlite.config import config
from jaxlite.core import ClosedJaxpr, Jaxpr, JaxprEqn, Var, subjaxprs

# A compile's cost in equation executions on the NumPy tier (~1 µs each).
HOT_BASE = 10_000
HOT_PER_EQUATION = 400
# What a call from native code into Python costs beyond the call itself (measured:
# 1.3 µs per call, 2.6 µs natively against 1.4 µs on NumPy for a scan step around a
# pure_callback), in equation executions: a loop that mostly calls the host gains
# nothing natively.
HOST_CALL_PENALTY = 2


def mode():
    """The backend policy in force: "auto", "native" or "numpy"."""
    chosen = config.current().backend
    if chosen != "numpy" and not native.available():
        return "numpy"
    return chosen


def work(jaxpr):
    """What one run of `jaxpr` saves natively, in equation executions: each equation
    counts one, an inner loop's body once per iteration (a `while` body ten times),
    and a host call `-HOST_CALL_PENALTY` (it costs the same Python call on both tiers,
    plus the trampoline from native code)."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    total = 0
    for eqn in jaxpr.eqns:
        if eqn.primitive in host_call_primitives:
            total -= HOST_CALL_PENALTY
            continue
        inner = sum(work(j) for j in subjaxprs(eqn.params))
        repeat = (
            eqn.params.get("length", 10)
            if eqn.primitive.name in ("scan", "while")
            else 1
        )
        total += 1 + repeat * inner
    return total


def size(jaxpr):
    """Equations in `jaxpr`, inner jaxprs included (each counted once)."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    return sum(1 + sum(size(j) for j in subjaxprs(e.params)) for e in jaxpr.eqns)


def compile_cost(jaxprs):
    """What compiling a loop of these jaxprs costs, in equation executions."""
    return HOT_BASE + HOT_PER_EQUATION * sum(size(j) for j in jaxprs)


def single_equation_jaxpr(eqn):
    """A closed jaxpr computing just `eqn`, one input per operand (literals too)."""
    invars = [Var(x.aval) for x in eqn.invars]
    outvars = [Var(v.aval) for v in eqn.outvars]
    new = JaxprEqn(eqn.primitive, invars, eqn.params, outvars, eqn.effects)
    return ClosedJaxpr(Jaxpr([], invars, outvars, [new]), [])


class TieredLoop:
    """A loop equation's runner: the NumPy runner until the loop is hot, then the
    native executable of the equation (see the module docstring). `make_python()`
    builds the NumPy runner when it is first needed: a long scan compiled before its
    first iteration never needs it (building one costs milliseconds of a first call).

    `body_work` is the work of one iteration; `length` the iteration count (None for
    a `while`, whose runner `step_runner` gives `(cond, body, split)` to iterate it
    here). `native_form()`, when given, returns `(closed, wrap)`: the jaxpr to compile
    natively instead of the equation alone, and `wrap(executable)`, the function of
    the equation's operands that runs it (a scan's work that does not depend on the
    carry runs before it on NumPy, vectorised: see `loops.native_scan_form`)."""

    def __init__(
        self,
        eqn,
        make_python,
        body_work,
        length=None,
        step_runner=None,
        native_form=None,
    ):
        self.eqn = eqn
        self.native_form = native_form
        self.make_python = make_python
        self._python = None
        self.body_work = body_work
        self.length = length
        self.step_runner = step_runner
        self.spent = 0
        self.hot = compile_cost(subjaxprs(eqn.params))
        self.native = None  # the executable, or False when it cannot compile

    def python(self, *args):
        if self._python is None:
            self._python = self.make_python()
        return self._python(*args)

    def _compile(self):
        if self.native is None:
            closed, wrap = single_equation_jaxpr(self.eqn), None
            if self.native_form is not None:
                closed, wrap = self.native_form()
            exe = native.compile(closed, self.eqn.primitive.name)
            if exe is None:
                self.native = False
            else:
                self.native = exe if wrap is None else wrap(exe)
        return self.native

    def __call__(self, *args):
        policy = mode()
        if policy == "numpy" or self.native is False:
            return self.python(*args)
        if policy == "auto" and self.body_work <= 0:
            return self.python(*args)  # nothing to gain (see `work`)
        if self.native is not None:
            return self.native(*args)
        if policy == "native":
            exe = self._compile()
            return exe(*args) if exe else self.python(*args)
        if self.length is not None:
            cost = self.length * self.body_work
            if self.spent + cost >= self.hot:
                exe = self._compile()
                if exe:
                    return exe(*args)
            self.spent += cost
            return self.python(*args)
        return self._run_while(args)

    def _run_while(self, args):
        cond, body, (n_cond, n_body) = self.step_runner()
        cond_consts, body_consts = args[:n_cond], args[n_cond : n_cond + n_body]
        carry = list(args[n_cond + n_body :])
        limit = max((self.hot - self.spent) // self.body_work, 1)
        n = 0
        while cond(*cond_consts, *carry)[0]:
            carry = body(*body_consts, *carry)
            n += 1
            if n >= limit:
                exe = self._compile()
                if exe:
                    return exe(*args[: n_cond + n_body], *carry)
                limit = float("inf")  # it cannot compile: finish here
        self.spent += n * self.body_work
        return list(carry)


class TieredFunction:
    """A jitted jaxpr's executable under the "auto" policy (see the module
    docstring): the NumPy executable `numpy_exe`, its calls timed until their total
    reaches the native compile cost, then a trial of `TRIALS` calls on each tier,
    taking turns, then whichever had the better best time. Offers what the backends'
    executables offer (`entry`, `fun`, `source`, calling it)."""

    TRIALS = 5
    # Calls before a compile may start, however long they took: most functions
    # called once or twice (set-up, initialisation, one large draw) never run again,
    # and would pay LLVM's time and memory (~40 MB while it works) for nothing.
    MIN_CALLS = 3

    __slots__ = ("closed", "name", "numpy", "native", "entry", "spent", "hot")
    __slots__ += ("best", "native_best", "calls")

    def __init__(self, numpy_exe, closed, name):
        self.closed = closed
        self.name = name
        self.numpy = numpy_exe
        self.native = None
        self.spent = 0  # ns on the NumPy tier
        self.hot = compile_cost([closed]) * 1000  # ns: an equation execution is ~1 µs
        self.best = self.native_best = float("inf")  # each tier's best call in trial
        self.calls = 0
        self.entry = self._rent

    @property
    def fun(self):
        return self.numpy.fun

    @property
    def source(self):
        """The source of what runs now: the LLVM IR once native code was chosen."""
        chosen = self.native is not None and self.entry == self.native.entry
        return (self.native if chosen else self.numpy).source

    def __call__(self, *args):
        return self.entry(*args)

    def _rent(self, *args):
        start = perf_counter_ns()
        outs = self.numpy.entry(*args)
        self.spent += perf_counter_ns() - start
        self.calls += 1
        if self.spent >= self.hot and self.calls >= self.MIN_CALLS:
            self.native = native.compile(self.closed, self.name)
            self.entry = self.numpy.entry if self.native is None else self._trial
            self.calls = 0
        return outs

    def _trial(self, *args):
        # The tiers take turns, and the NumPy tier's best is measured afresh: its own
        # hot loops may have moved to native code meanwhile (with their carry-free
        # work hoisted onto NumPy's BLAS, which can beat the whole function natively).
        on_native = self.calls % 2 == 0
        start = perf_counter_ns()
        outs = (self.native if on_native else self.numpy).entry(*args)
        took = perf_counter_ns() - start
        if on_native:
            self.native_best = min(self.native_best, took)
        else:
            self.best = min(self.best, took)
        self.calls += 1
        if self.calls >= 2 * self.TRIALS:
            faster = self.native_best < self.best
            self.entry = (self.native if faster else self.numpy).entry
        return outs
