"""Configuration: the `jax.config` object and its context managers.

JAX keeps a handful of switches (64-bit types, NaN checking, eager mode, ...) and
reads them at trace time. jaxlite keeps the same names, defaults and environment
variables so that `jax.config.update("jax_enable_x64", True)` and `JAX_ENABLE_X64=1`
mean the same thing here. As in JAX, `config.update` sets the global value and the
context managers (`with jax.enable_x64():`, `jax.debug_nans(True)`, ...) set a value
for the current thread only: a block in one thread never changes what another
thread computes.

Each thread reads one view of every value (a context variable): the global one, or
its own while one of its context managers is active. The options most often read on
the hot path are attributes of the view (`current().x64_enabled`, also readable as
`config.x64_enabled`; two combined ones, `debug_checks` = NaN or inf checking and
`jit_slow_path` = that or `disable_jit`, let a hot path test one bool), and
`trace_context` is a hashable tuple of every option that changes what a trace
produces, so `jit` can put it straight into its cache key. After every change
registered listeners run.
"""

import collections
import contextlib
import contextvars
import operator
import os
import threading
import warnings
import weakref

_TRUE_STRINGS = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE_STRINGS = frozenset({"0", "false", "f", "no", "n", "off", ""})

_RANK_PROMOTION_VALUES = ("allow", "warn", "raise")
_MATMUL_PRECISION_VALUES = (
    "default",
    "high",
    "highest",
    "bfloat16",
    "tensorfloat32",
    "float32",
    "ANY_F8_ANY_F8_F32",
    "ANY_F8_ANY_F8_F32_FAST_ACCUM",
    "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM",
    "F16_F16_F16",
    "F16_F16_F32",
    "BF16_BF16_BF16",
    "BF16_BF16_F32",
    "BF16_BF16_F32_X3",
    "BF16_BF16_F32_X6",
    "BF16_BF16_F32_X9",
    "TF32_TF32_F32",
    "TF32_TF32_F32_X3",
    "F32_F32_F32",
    "F64_F64_F64",
)


def bool_env(varname, default):
    """Reads a boolean from the environment ("1", "true", "yes" / "0", "false", "")."""
    value = os.environ.get(varname)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE_STRINGS:
        return True
    if lowered in _FALSE_STRINGS:
        return False
    raise ValueError(
        f"invalid truth value {value!r} for environment variable {varname!r}; "
        "use one of 1/true/yes/on or 0/false/no/off."
    )


def _check_bool(name, value):
    return bool(value)


def _check_rank_promotion(name, value):
    if value not in _RANK_PROMOTION_VALUES:
        raise ValueError(
            f"{name} must be one of {list(_RANK_PROMOTION_VALUES)}, got {value!r}."
        )
    return value


def _check_dtype_promotion(name, value):
    if value not in ("standard", "strict"):
        raise ValueError(f"{value!r} is not a valid NumpyDtypePromotion")
    return value


def _check_matmul_precision(name, value):
    if value is not None and value not in _MATMUL_PRECISION_VALUES:
        raise ValueError(
            f"{name} must be None or one of {list(_MATMUL_PRECISION_VALUES)}, "
            f"got {value!r}."
        )
    return value


def _check_nonnegative_int(name, value):
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if number < 0 or (isinstance(value, float) and value != number):
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}.")
    return number


def _check_optional_str(name, value):
    if value is not None and not isinstance(value, str):
        raise ValueError(
            f"{name} must be None or a string, got {value!r} of type {type(value)}."
        )
    return value


def _launched_by_mpi():
    from jaxlite.distributed import launched_by_mpi  # a base module, like this one

    return launched_by_mpi()


def _check_num_cpu_devices(name, value):
    if isinstance(value, str) and name.isupper():  # JAX_NUM_CPU_DEVICES
        try:
            value = int(value)
        except ValueError:
            raise ValueError(f'Invalid value "{value}" for JAX flag {name}') from None
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise ValueError(
            "new int config value must be None or of type int, got "
            f"{value} of type {type(value)}"
        )
    if value is not None and value > 1 and not _launched_by_mpi():
        warnings.warn(
            f"{name}={value}: jaxlite has one CPU device in a single process; the "
            "option is recorded, but jax.devices() stays that one device. It takes "
            "effect in a program of several processes: each gets that many devices "
            "at jax.distributed.initialize().",
            UserWarning,
            stacklevel=4,
        )
    return value


_PRNG_IMPLS = (
    "threefry2x32",
    "threefry4x32",
    "rbg",
    "unsafe_rbg",
    "philox2x32",
    "philox4x32",
)


def _check_prng_impl(name, value):
    if value not in _PRNG_IMPLS:
        raise ValueError(
            f"new enum value must be in {list(_PRNG_IMPLS)}, got {value!r} of type "
            f"{type(value)}."
        )
    return value


def _check_backend(name, value):
    if value not in ("auto", "numpy", "native"):
        raise ValueError(
            f"{name} must be one of 'auto', 'numpy' or 'native', got {value!r}."
        )
    return value


def _check_legacy_key(name, value):
    value = getattr(value, "value", value)  # JAX's LegacyPrngKeyState members
    if value not in ("allow", "warn", "error"):
        raise ValueError(f"{value!r} is not a valid LegacyPrngKeyState")
    return value


class _Option:
    """One configuration option: default, environment variable and validator."""

    def __init__(self, default, env_var, check):
        self.default = default
        self.env_var = env_var
        self.check = check

    def initial_value(self):
        if self.env_var is None:
            return self.default
        if self.check is _check_bool:
            return bool_env(self.env_var, self.default)
        return self.check(self.env_var, os.environ.get(self.env_var, self.default))


_OPTIONS = {
    "jax_enable_x64": _Option(False, "JAX_ENABLE_X64", _check_bool),
    "jax_debug_nans": _Option(False, "JAX_DEBUG_NANS", _check_bool),
    "jax_debug_infs": _Option(False, "JAX_DEBUG_INFS", _check_bool),
    "jax_disable_jit": _Option(False, "JAX_DISABLE_JIT", _check_bool),
    "jax_threefry_partitionable": _Option(
        True, "JAX_THREEFRY_PARTITIONABLE", _check_bool
    ),
    "jax_numpy_rank_promotion": _Option(
        "allow", "JAX_NUMPY_RANK_PROMOTION", _check_rank_promotion
    ),
    "jax_numpy_dtype_promotion": _Option(
        "standard", "JAX_NUMPY_DTYPE_PROMOTION", _check_dtype_promotion
    ),
    "jax_default_matmul_precision": _Option(
        None, "JAX_DEFAULT_MATMUL_PRECISION", _check_matmul_precision
    ),
    "jax_platforms": _Option(None, "JAX_PLATFORMS", _check_optional_str),
    "jax_platform_name": _Option(None, "JAX_PLATFORM_NAME", _check_optional_str),
    # JAX's number of CPU devices (for sharding tests on one machine). jaxlite has
    # one device: the value is accepted and read back, with a warning above 1.
    "jax_num_cpu_devices": _Option(-1, "JAX_NUM_CPU_DEVICES", _check_num_cpu_devices),
    # jaxlite's own: keep freed array buffers for reuse (jaxlite.backend.memory).
    "jaxlite_malloc_tuning": _Option(True, "JAXLITE_MALLOC_TUNING", _check_bool),
    # jaxlite's own: float32 transcendental functions (exp, tanh, sin, ...) run eagerly
    # on arrays with at most this many elements are computed as XLA:CPU computes them,
    # equal to JAX bit for bit, at the cost of tens of NumPy calls (or one C call per
    # element); larger arrays and compiled code (jit) use NumPy's ufuncs, within a few
    # ulp (jaxlite.lax.xla_float32). 0 turns the exact kernels off.
    "jaxlite_xla_exact_math_limit": _Option(
        1024, "JAXLITE_XLA_EXACT_MATH_LIMIT", _check_nonnegative_int
    ),
    # jaxlite's own: which backend runs compiled code. "numpy" generates Python over
    # NumPy; "native" compiles every jaxpr it can to machine code (LLVM, through
    # llvmlite); "auto" compiles loops natively once they are hot enough to pay for
    # it (jaxlite.backend.tiering). Without llvmlite every value means "numpy".
    "jaxlite_backend": _Option("auto", "JAXLITE_BACKEND", _check_backend),
    # As JAX's persistent compilation cache: where natively compiled code is kept
    # across runs (jaxlite.backend.native.engine.compile_ir). Off when None.
    "jax_compilation_cache_dir": _Option(
        None, "JAX_COMPILATION_CACHE_DIR", _check_optional_str
    ),
    # jaxlite's own: log (logger "jaxlite.backend.native") each jaxpr or loop the
    # native backend compiles, and each one it leaves to NumPy, with the reason.
    "jaxlite_native_log": _Option(False, "JAXLITE_NATIVE_LOG", _check_bool),
    # Debugging and PRNG switches of JAX (see `jaxlite.cache_misses` for the ones jit
    # reads; the others are accepted and read back, with nothing to switch here).
    "jax_check_tracer_leaks": _Option(False, "JAX_CHECK_TRACER_LEAKS", _check_bool),
    "jax_debug_key_reuse": _Option(False, "JAX_DEBUG_KEY_REUSE", _check_bool),
    "jax_explain_cache_misses": _Option(False, "JAX_EXPLAIN_CACHE_MISSES", _check_bool),
    "jax_no_tracing": _Option(False, "JAX_NO_TRACING", _check_bool),
    "jax_no_execution": _Option(False, "JAX_NO_EXECUTION", _check_bool),
    "jax_enable_checks": _Option(False, "JAX_ENABLE_CHECKS", _check_bool),
    "jax_default_prng_impl": _Option(
        "threefry2x32", "JAX_DEFAULT_PRNG_IMPL", _check_prng_impl
    ),
    "jax_enable_custom_prng": _Option(False, "JAX_ENABLE_CUSTOM_PRNG", _check_bool),
    "jax_legacy_prng_key": _Option("allow", "JAX_LEGACY_PRNG_KEY", _check_legacy_key),
    "jax_softmax_custom_jvp": _Option(False, "JAX_SOFTMAX_CUSTOM_JVP", _check_bool),
    "jax_allow_f16_reductions": _Option(True, "JAX_ALLOW_F16_REDUCTIONS", _check_bool),
}

# Options whose value changes what tracing produces, in `trace_context` order.
_TRACE_OPTIONS = (
    "jax_enable_x64",
    "jax_debug_nans",
    "jax_debug_infs",
    "jax_disable_jit",
    "jax_numpy_rank_promotion",
    "jax_numpy_dtype_promotion",
    "jax_default_matmul_precision",
    "jax_softmax_custom_jvp",
    "jax_allow_f16_reductions",
    "jax_threefry_partitionable",  # which counters random bits use
    "jaxlite_backend",  # not a tracing option, but what compiles the trace
)
# The names of `config.trace_context`'s entries, in order (for cache-miss messages).
TRACE_OPTIONS = _TRACE_OPTIONS


class _View:
    """The options as the threads that share it see them: the global values overlaid
    with the values their context managers set (`overrides`), and the derived flags
    the hot paths read (`x64_enabled`, `trace_context`, ...).

    A change of a global value refreshes every view in one step (its `__dict__` is
    swapped), so a reader sees all the old values or all the new ones; `version`
    grows with every refresh, which lets a cache tell whether its computation saw one
    set of values throughout.
    """

    def __init__(self, overrides, global_values, version):
        self.refresh(overrides, global_values, version)

    def refresh(self, overrides, global_values, version):
        values = {**global_values, **overrides} if overrides else dict(global_values)
        debug_checks = values["jax_debug_nans"] or values["jax_debug_infs"]
        self.__dict__ = {
            "overrides": overrides,
            "values": values,
            "version": version,
            "x64_enabled": values["jax_enable_x64"],
            "debug_nans": values["jax_debug_nans"],
            "debug_infs": values["jax_debug_infs"],
            "disable_jit": values["jax_disable_jit"],
            # debug_nans hook: one bool for the hot paths (jaxlite.debug_nans).
            "debug_checks": debug_checks,
            "no_execution": values["jax_no_execution"],
            "jit_slow_path": (
                values["jax_disable_jit"] or debug_checks or values["jax_no_execution"]
            ),
            "xla_exact_math_limit": values["jaxlite_xla_exact_math_limit"],
            "backend": values["jaxlite_backend"],
            # What selects the dtype module's caches: (x64, strict promotion).
            "promotion_mode": (
                values["jax_enable_x64"],
                values["jax_numpy_dtype_promotion"] == "strict",
            ),
            "trace_context": tuple(values[name] for name in _TRACE_OPTIONS),
        }


def _view_attribute(name, doc):
    read = operator.attrgetter(name)

    def get(self):
        return read(self.current())

    return property(get, doc=doc)


class Config:
    """The options, read as attributes and changed with `update`.

    As in JAX, `update` sets an option's global value, seen by every thread that has
    not set it itself, and the context managers (`enable_x64`, `debug_nans`,
    `disable_jit`, `default_matmul_precision`, ...) set it for the current thread only
    (for the current context: an asyncio task inherits it from its creator), inside
    their block (see `override`). `current()` is the calling thread's view of all
    values, one C call: hot paths read it once and take its attributes.
    """

    x64_enabled = _view_attribute("x64_enabled", "jax_enable_x64")
    debug_nans = _view_attribute("debug_nans", "jax_debug_nans")
    debug_infs = _view_attribute("debug_infs", "jax_debug_infs")
    disable_jit = _view_attribute("disable_jit", "jax_disable_jit")
    debug_checks = _view_attribute("debug_checks", "NaN or inf checking is on")
    no_execution = _view_attribute("no_execution", "jax_no_execution")
    jit_slow_path = _view_attribute(
        "jit_slow_path", "disable_jit, NaN/inf checking or no_execution is on"
    )
    xla_exact_math_limit = _view_attribute(
        "xla_exact_math_limit", "jaxlite_xla_exact_math_limit"
    )
    promotion_mode = _view_attribute(
        "promotion_mode", "(x64 enabled, strict dtype promotion): the dtype caches' key"
    )
    trace_context = _view_attribute(
        "trace_context",
        "the options that change what tracing produces, as a hashable tuple (in "
        "jit's cache key)",
    )

    def __init__(self):
        self._values = {name: opt.initial_value() for name, opt in _OPTIONS.items()}
        self._listeners = []
        # Changes (global or per thread) and the listeners they run are serialised.
        self._lock = threading.RLock()
        self._version = 0
        self._global = _View({}, self._values, self._version)
        # Each thread's view: the global one until a context manager sets another.
        self._view = contextvars.ContextVar("jaxlite_config", default=self._global)
        self.current = self._view.get
        # The views with overrides that may still be in use, refreshed by `update`.
        self._overriding = weakref.WeakSet()
        # Per option, how many context manager blocks (in any thread) set it truthy.
        self._active = collections.Counter()

    def _unknown(self, name):
        return AttributeError(
            f"Unrecognized config option: {name!r}. Known options are: "
            f"{', '.join(sorted(_OPTIONS))}. Check the spelling, e.g. "
            "config.update('jax_enable_x64', True)."
        )

    def __getattr__(self, name):
        # Only called when normal lookup fails: the option names.
        view = self.__dict__.get("_view")
        if view is not None and name in _OPTIONS:
            return view.get().values[name]
        raise self._unknown(name)

    def _checked(self, name, value):
        option = _OPTIONS.get(name)
        if option is None:
            raise self._unknown(name)
        return option.check(name, value)

    def _notify(self, name, value):
        for listener in tuple(self._listeners):
            listener(name, value)

    def update(self, name, value):
        """Sets the global value of option `name` (what every thread sees unless it
        sets the option itself, with a context manager) and notifies the listeners."""
        value = self._checked(name, value)
        with self._lock:
            self._values[name] = value
            self._version += 1
            for view in (self._global, *self._overriding):
                view.refresh(view.overrides, self._values, self._version)
            self._notify(name, value)

    def set_local(self, name, value):
        """Sets option `name` to `value` in the current thread only and notifies the
        listeners; returns the handle that `restore_local` takes. Prefer `override`."""
        value = self._checked(name, value)
        with self._lock:
            overrides = {**self.current().overrides, name: value}
            self._version += 1
            view = _View(overrides, self._values, self._version)
            self._overriding.add(view)
            token = self._view.set(view)
            self._active[name] += bool(value)
            self._notify(name, value)
        return token, bool(value)

    def restore_local(self, name, handle):
        """Undoes `set_local(name, ...)`, given the handle it returned."""
        token, was_on = handle
        with self._lock:
            self._active[name] -= was_on
            self._view.reset(token)
            self._notify(name, self.read(name))

    def read(self, name):
        """Returns the value of option `name` in the current thread."""
        if name not in _OPTIONS:
            raise self._unknown(name)
        return self.current().values[name]

    @property
    def values(self):
        """A copy of every option's value in the current thread, keyed by name."""
        return dict(self.current().values)

    def set_in_any_thread(self, name):
        """Whether option `name` is on (truthy) globally or in some thread: what a
        listener that installs a process-wide hook (a checking eval trace) asks."""
        with self._lock:
            return bool(self._values[name]) or self._active[name] > 0

    def add_listener(self, fn):
        """Registers `fn(name, value)`, called after every successful change of an
        option, global (`update`) or in one thread (`set_local`, in that thread),
        with the lock that serialises changes held."""
        self._listeners.append(fn)

    def remove_listener(self, fn):
        self._listeners.remove(fn)

    def config_with_absl(self):
        """Accepted for compatibility with JAX; jaxlite has no absl flags."""

    def parse_flags_with_absl(self):
        """Accepted for compatibility with JAX; jaxlite has no absl flags."""


config = Config()
# This thread's view of the options (see `Config`): `current().x64_enabled`.
current = config.current


@contextlib.contextmanager
def override(name, value):
    """Inside the block, option `name` is `value` in the current thread (other threads
    keep theirs), as JAX's config context managers."""
    handle = config.set_local(name, value)
    try:
        yield
    finally:
        config.restore_local(name, handle)


_REQUIRED = object()


class State:
    """A boolean option as JAX exposes it at top level (`jax.debug_nans`,
    `jax.enable_x64`): `.value` reads it, calling it gives a context manager
    that sets it inside its block (to True when called without an argument)."""

    def __init__(self, name, doc):
        self.name = name
        self.__doc__ = doc

    @property
    def value(self):
        return config.read(self.name)

    def __call__(self, new_val=True):
        return override(self.name, new_val)


class EnumState(State):
    """A State whose value is not a bool (`jax.default_prng_impl`): its context
    manager needs the new value."""

    def __call__(self, new_val=_REQUIRED):
        if new_val is _REQUIRED:
            raise TypeError(
                f"Context manager for {self.name.removeprefix('jax_')} config option "
                "requires an argument representing the new value for the config "
                "option."
            )
        return override(self.name, new_val)

    def __repr__(self):
        return f"<jaxlite config state {self.name}={self.value!r}>"


enable_x64 = State(
    "jax_enable_x64",
    "64-bit types: `with enable_x64():` turns them on (or off) inside its block.",
)
debug_nans = State(
    "jax_debug_nans",
    "NaN checking: `with debug_nans(True):` raises FloatingPointError where a NaN "
    "is produced inside its block (see jaxlite.debug_nans).",
)
debug_infs = State(
    "jax_debug_infs",
    "Inf checking: `with debug_infs(True):` raises FloatingPointError where an "
    "inf is produced inside its block (see jaxlite.debug_nans).",
)

check_tracer_leaks = State(
    "jax_check_tracer_leaks",
    "Tracer leak checking: inside `with check_tracer_leaks(True):` a transformation "
    "whose tracers outlive it fails when it ends (see jaxlite.tracer_leaks).",
)
debug_key_reuse = State(
    "jax_debug_key_reuse",
    "Key reuse checking of typed PRNG keys: accepted; jaxlite does not track it.",
)
explain_cache_misses = State(
    "jax_explain_cache_misses",
    "Inside the block, each jit tracing cache miss logs (WARNING, logger "
    "`jaxlite.cache_misses`) why the previous entries did not match.",
)
no_tracing = State(
    "jax_no_tracing",
    "Inside the block, a jit cache miss (a new trace) raises RuntimeError.",
)
no_execution = State(
    "jax_no_execution",
    "Inside the block, running anything (an eager operation or a jit call) raises "
    "RuntimeError; tracing (make_jaxpr, eval_shape) still works.",
)
enable_checks = State(
    "jax_enable_checks",
    "Internal invariant checking: accepted; jaxlite's checks are always on.",
)
threefry_partitionable = State(
    "jax_threefry_partitionable",
    "Threefry counters by flat element index (JAX's default and jaxlite's only mode).",
)
default_prng_impl = EnumState(
    "jax_default_prng_impl",
    'The default PRNG implementation: "threefry2x32" (the default), "rbg", ...',
)
enable_custom_prng = State(
    "jax_enable_custom_prng",
    "Custom PRNG implementations: accepted and read back.",
)
legacy_prng_key = EnumState(
    "jax_legacy_prng_key",
    'What raw uint32 keys passed to jax.random do: "allow", "warn" or "error".',
)
softmax_custom_jvp = State(
    "jax_softmax_custom_jvp",
    "Inside the block, jax.nn.softmax uses its custom JVP rule.",
)
allow_f16_reductions = State(
    "jax_allow_f16_reductions",
    "Whether reduce_sum on float16/bfloat16 is allowed (read back by jaxlite).",
)


def disable_jit(disable=True):
    """Context manager that runs `jit`-decorated functions eagerly in its block."""
    return override("jax_disable_jit", disable)
