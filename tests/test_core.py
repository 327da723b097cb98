"""The core: abstract values, tracers, jaxprs (printing, typechecking, DCE, evaluation).

The golden jaxpr texts below are what JAX 0.10.2 prints for the same programs (one
test checks that against JAX itself when it is installed): one-line and multi-line
forms, literals, constvars, unused results printed as `_`, wrapped binder lists and
nested `jit` equations.
"""

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import core, jaxpr_printer, lax
from jaxlite.core import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    JaxprTypeError,
    Literal,
    Primitive,
    ShapedArray,
    Var,
    abstract_eval_rules,
    dce_jaxpr,
    eval_jaxpr,
    impl_rules,
    typecheck_jaxpr,
)
from jaxlite.errors import UnexpectedTracerError
from jaxlite.lax.elementwise import add_p, mul_p, sin_p

f32 = np.dtype(np.float32)
i32 = np.dtype(np.int32)

# ----------------------------------------------------------------------------------------
# Golden jaxprs


def programs(jax, jnp, lax):
    """(name, function, example arguments), written once for JAX and for jaxlite."""
    S = jax.ShapeDtypeStruct
    f32 = jnp.float32
    c3 = jnp.arange(3.0)

    def inner(x, y):
        a = jnp.sin(x) + 1
        b = a * y
        return b, a, jnp.cos(b)

    def two(x):
        return x + 1, x * 2

    def chain(x):
        for _ in range(30):
            x = jnp.sin(x)
        return x

    return [
        ("sin_mul", lambda x: jnp.sin(x) * 2.0, (1.0,)),
        ("width_79", lambda x: jnp.sin(x) * 2.0, (S((1,), f32),)),
        ("width_80", lambda x: jnp.sin(x) * 20.0, (S((1,), f32),)),
        ("width_81", lambda x: jnp.sin(x) * 200.0, (S((1,), f32),)),
        ("multi_line", lambda x: jnp.sin(x) * 2.0, (S((10,), f32),)),
        ("int_literals", lambda x: (x * 3, x < 2, x - 1), (1,)),
        ("bool_literal", lambda x: jnp.logical_and(x, True), (True,)),
        ("weak_to_strong", lambda x: x + jnp.float32(2.5), (1,)),
        ("constvar", lambda x: x * c3 + c3, (2.0,)),
        (
            "constvar_two_inputs",
            lambda x, y: x * np.arange(3.0) * y,
            (S((3,), f32), 2.0),
        ),
        ("identity", lambda x: x, (2.0,)),
        ("literal_out", lambda x: 1.0, (2.0,)),
        ("const_out", lambda x: (x, c3), (2.0,)),
        ("no_outputs", lambda x: (), (2.0,)),
        ("unused_eqn", lambda x: (jnp.sin(x), jnp.cos(x))[1], (1.0,)),
        ("ten_inputs", lambda *a: a[0], tuple(S((), jnp.int32) for _ in range(10))),
        ("thirty_inputs", lambda *a: a[0], tuple(S((), jnp.int32) for _ in range(30))),
        ("wide_inputs", lambda *a: a[0], tuple(S((100, 200), f32) for _ in range(11))),
        (
            "params_fit_args_overflow",
            lambda x, y: lax.convert_element_type(x, f32) + y,
            (S((100000000, 1), jnp.int32), S((100000000, 1), f32)),
        ),
        (
            "params_break",
            lambda x, y: lax.convert_element_type(x, f32) + y,
            (S((100000000, 10), jnp.int32), S((100000000, 10), f32)),
        ),
        ("many_names", chain, (1.0,)),
        ("nested_jit", lambda x: jax.jit(lambda y: y + 1)(x) * 2, (1.0,)),
        (
            "nested_jit_multiline",
            lambda x: jax.jit(inner)(x, x)[0] * 2,
            (S((2, 3), f32),),
        ),
        ("nested_jit_unused_output", lambda x: jax.jit(two)(x)[1], (1.0,)),
        (
            "nested_jit_renamed_args",
            lambda x, y: jax.jit(lambda a, b: (a * b, a - b))(jnp.sin(y), x),
            (1.0, 2.0),
        ),
        ("nested_jit_consts", lambda x: jax.jit(lambda y: y * c3)(x), (S((3,), f32),)),
        ("nested_jit_passthrough", lambda x: jax.jit(lambda y: (y, y))(x), (1.0,)),
        (
            "doubly_nested_jit",
            lambda x: jax.jit(lambda z: jax.jit(inner)(z, 2.0))(x),
            (1.0,),
        ),
    ]


GOLDEN = {
    "sin_mul": """\
{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }""",
    "width_79": """\
{ lambda ; a:f32[1]. let b:f32[1] = sin a; c:f32[1] = mul b 2.0:f32[] in (c,) }""",
    "width_80": """\
{ lambda ; a:f32[1]. let b:f32[1] = sin a; c:f32[1] = mul b 20.0:f32[] in (c,) }""",
    "width_81": """\
{ lambda ; a:f32[1]. let
    b:f32[1] = sin a
    c:f32[1] = mul b 200.0:f32[]
  in (c,) }""",
    "multi_line": """\
{ lambda ; a:f32[10]. let
    b:f32[10] = sin a
    c:f32[10] = mul b 2.0:f32[]
  in (c,) }""",
    "int_literals": """\
{ lambda ; a:i32[]. let
    b:i32[] = mul a 3:i32[]
    c:bool[] = lt a 2:i32[]
    d:i32[] = sub a 1:i32[]
  in (b, c, d) }""",
    "bool_literal": """\
{ lambda ; a:bool[]. let b:bool[] = and a True:bool[] in (b,) }""",
    "weak_to_strong": """\
{ lambda ; a:i32[]. let
    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = add b 2.5:f32[]
  in (c,) }""",
    "constvar": """\
{ lambda a:f32[3]; b:f32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[3] = mul c a
    e:f32[3] = add d a
  in (e,) }""",
    "constvar_two_inputs": """\
{ lambda a:f32[3]; b:f32[3] c:f32[]. let
    d:f32[3] = mul b a
    e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    f:f32[3] = mul d e
  in (f,) }""",
    "identity": """\
{ lambda ; a:f32[]. let  in (a,) }""",
    "literal_out": """\
{ lambda ; a:f32[]. let  in (1.0:f32[],) }""",
    "const_out": """\
{ lambda a:f32[3]; b:f32[]. let  in (b, a) }""",
    "no_outputs": """\
{ lambda ; a:f32[]. let  in () }""",
    "unused_eqn": """\
{ lambda ; a:f32[]. let _:f32[] = sin a; b:f32[] = cos a in (b,) }""",
    "ten_inputs": (
        "{ lambda ; a:i32[] b:i32[] c:i32[] d:i32[] e:i32[] f:i32[] g:i32[] h:i32[] i:i32[]\n"
        "    j:i32[]. let\n"
        "    \n"
        "  in (a,) }"
    ),
    "thirty_inputs": (
        "{ lambda ; a:i32[] b:i32[] c:i32[] d:i32[] e:i32[] f:i32[] g:i32[] h:i32[] i:i32[]\n"
        "    j:i32[] k:i32[] l:i32[] m:i32[] n:i32[] o:i32[] p:i32[] q:i32[] r:i32[] s:i32[]\n"
        "    t:i32[] u:i32[] v:i32[] w:i32[] x:i32[] y:i32[] z:i32[] ba:i32[] bb:i32[] bc:i32[]\n"
        "    bd:i32[]. let\n"
        "    \n"
        "  in (a,) }"
    ),
    "wide_inputs": (
        "{ lambda ; a:f32[100,200] b:f32[100,200] c:f32[100,200] d:f32[100,200] e:f32[100,200]\n"
        "    f:f32[100,200] g:f32[100,200] h:f32[100,200] i:f32[100,200] j:f32[100,200] k:f32[100,200]. let\n"
        "    \n"
        "  in (a,) }"
    ),
    "params_fit_args_overflow": """\
{ lambda ; a:i32[100000000,1] b:f32[100000000,1]. let
    c:f32[100000000,1] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[100000000,1] = add c b
  in (d,) }""",
    "params_break": """\
{ lambda ; a:i32[100000000,10] b:f32[100000000,10]. let
    c:f32[100000000,10] = convert_element_type[
      new_dtype=float32
      weak_type=False
    ] a
    d:f32[100000000,10] = add c b
  in (d,) }""",
    "many_names": """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = sin b
    d:f32[] = sin c
    e:f32[] = sin d
    f:f32[] = sin e
    g:f32[] = sin f
    h:f32[] = sin g
    i:f32[] = sin h
    j:f32[] = sin i
    k:f32[] = sin j
    l:f32[] = sin k
    m:f32[] = sin l
    n:f32[] = sin m
    o:f32[] = sin n
    p:f32[] = sin o
    q:f32[] = sin p
    r:f32[] = sin q
    s:f32[] = sin r
    t:f32[] = sin s
    u:f32[] = sin t
    v:f32[] = sin u
    w:f32[] = sin v
    x:f32[] = sin w
    y:f32[] = sin x
    z:f32[] = sin y
    ba:f32[] = sin z
    bb:f32[] = sin ba
    bc:f32[] = sin bb
    bd:f32[] = sin bc
    be:f32[] = sin bd
  in (be,) }""",
    "nested_jit": """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) }
    ] a
    c:f32[] = mul b 2.0:f32[]
  in (c,) }""",
    "nested_jit_multiline": """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] _:f32[2,3] _:f32[2,3] = jit[
      name=inner
      jaxpr={ lambda ; a:f32[2,3] c:f32[2,3]. let
          d:f32[2,3] = sin a
          _:f32[2,3] = add d 1.0:f32[]
          b:f32[2,3] = mul _ c
          _:f32[2,3] = cos b
        in (b, _, _) }
    ] a a
    e:f32[2,3] = mul b 2.0:f32[]
  in (e,) }""",
    "nested_jit_unused_output": """\
{ lambda ; a:f32[]. let
    _:f32[] b:f32[] = jit[
      name=two
      jaxpr={ lambda ; a:f32[]. let
          _:f32[] = add a 1.0:f32[]
          b:f32[] = mul a 2.0:f32[]
        in (_, b) }
    ] a
  in (b,) }""",
    "nested_jit_renamed_args": """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin b
    d:f32[] e:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] a:f32[]. let
          d:f32[] = mul c a
          e:f32[] = sub c a
        in (d, e) }
    ] c a
  in (d, e) }""",
    "nested_jit_consts": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda c:f32[3]; a:f32[3]. let b:f32[3] = mul a c in (b,) }
    ] a
  in (b,) }""",
    "nested_jit_passthrough": """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let  in (a, a) }
    ] a
  in (b, c) }""",
    "doubly_nested_jit": """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] d:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          b:f32[] c:f32[] d:f32[] = jit[
            name=inner
            jaxpr={ lambda ; a:f32[] e:f32[]. let
                f:f32[] = sin a
                c:f32[] = add f 1.0:f32[]
                b:f32[] = mul c e
                d:f32[] = cos b
              in (b, c, d) }
          ] a 2.0:f32[]
        in (b, c, d) }
    ] a
  in (b, c, d) }""",
}

PROGRAMS = programs(jax, jnp, lax)


@pytest.mark.parametrize("name,fun,args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_golden_jaxpr(name, fun, args):
    assert str(jax.make_jaxpr(fun)(*args)) == GOLDEN[name]


def test_golden_jaxprs_are_what_jax_prints():
    real_jax = pytest.importorskip("jax")
    import jax.numpy as real_jnp
    from jax import lax as real_lax

    for name, fun, args in programs(real_jax, real_jnp, real_lax):
        assert str(real_jax.make_jaxpr(fun)(*args)) == GOLDEN[name], name


def test_golden_lines_fit_jax_layout():
    # One-line form exactly when the whole jaxpr fits in 80 columns.
    assert len(GOLDEN["width_80"]) == 80 and "\n" not in GOLDEN["width_80"]
    assert "\n" in GOLDEN["width_81"]
    # An equation's [params] break only when they do not fit; operands may overflow.
    line = GOLDEN["params_fit_args_overflow"].splitlines()[1]
    assert len(line) == 82 and line.endswith("weak_type=False] a")


def test_jaxpr_repr_and_str_agree():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)
    assert repr(closed) == str(closed) == str(closed.jaxpr) == closed.pretty_print()


def test_eqn_repr():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)
    assert repr(closed.eqns[1]) == "a:f32[] = mul b 2.0:f32[]"


@pytest.mark.parametrize(
    "i,name",
    [(0, "a"), (1, "b"), (25, "z"), (26, "ba"), (27, "bb"), (51, "bz"), (52, "ca")],
)
def test_var_names(i, name):
    assert jaxpr_printer._var_name(i) == name


def test_var_names_in_a_long_jaxpr():
    text = GOLDEN["many_names"]
    names = [line.split(":")[0].strip() for line in text.splitlines()[1:-1]]
    assert names[:3] == ["b", "c", "d"]
    assert names[24:27] == ["z", "ba", "bb"]


def test_literals_print_shortest_float32_text():
    text = str(jax.make_jaxpr(lambda x: x * 0.1 + 1e20 - 1e-8)(1.0))
    assert "mul a 0.1:f32[]" in text
    assert "add b 1e+20:f32[]" in text
    assert "sub c 1e-08:f32[]" in text


def test_strongly_typed_literals_print_their_double_value():
    # As JAX 0.10.2: a float32 constant prints as the Python float it converts to;
    # weak Python scalars print as written.
    def program(jax_mod):
        def f(x):
            f32 = np.float32(0.1)
            sin = jax_mod.numpy.sin(f32)
            return x + 0.1, f32 * x, sin, jax_mod.lax.add(x, 0.1)

        return str(jax_mod.make_jaxpr(f)(np.ones(2, np.float32)))

    text = program(jax)
    assert "add a 0.10000000149011612:f32[]" in text
    assert "mul 0.10000000149011612:f32[] a" in text
    assert "sin 0.10000000149011612:f32[]" in text
    assert "add a 0.1:f32[]" in text
    c = str(
        jax.make_jaxpr(lambda z: z * np.complex64(0.1 + 0.2j))(jnp.ones(2, "complex64"))
    )
    assert "(0.10000000149011612+0.20000000298023224j):c64[]" in c
    real = pytest.importorskip("jax")
    assert text == program(real)


def test_jaxpr_with_jaxpr_param_names_inner_vars_freshly():
    # Jaxpr parameters of primitives other than jit continue the naming of the outer
    # jaxpr (as JAX prints cond branches and scan bodies).
    inner = jax.make_jaxpr(jnp.sin)(1.0)
    closed = _with_prim(
        "test_call",
        lambda *avals, jaxpr: (jaxpr.out_avals, core.no_effects),
        lambda *args, jaxpr: core.jaxpr_as_fun(jaxpr)(*args),
        multiple_results=True,
        fun=lambda p: lambda x: p.bind(x, jaxpr=inner)[0] * 2.0,
    )
    assert str(closed) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = test_call[jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }] a\n"
        "    e:f32[] = mul b 2.0:f32[]\n"
        "  in (e,) }"
    )


def _with_prim(name, abstract, impl, fun, multiple_results=False):
    """make_jaxpr of `fun(prim)(1.0)` with a primitive registered only for the call."""
    prim = Primitive(name, multiple_results=multiple_results)
    abstract_eval_rules[prim] = abstract
    impl_rules[prim] = impl
    try:
        return jax.make_jaxpr(fun(prim))(1.0)
    finally:
        del abstract_eval_rules[prim], impl_rules[prim]


# ----------------------------------------------------------------------------------------
# Abstract values and tracers


def test_shaped_array_repr_and_str_short():
    a = ShapedArray((2, 3), np.float32)
    assert repr(a) == "ShapedArray(float32[2,3])"
    assert str(a) == "float32[2,3]"
    assert str(ShapedArray((), np.float32, weak_type=True)) == "~float32[]"
    assert a.str_short() == "f32[2,3]"
    assert a.str_short(short_dtypes=False) == "float32[2,3]"
    weak = ShapedArray((), np.int32, weak_type=True)
    assert repr(weak) == "ShapedArray(int32[], weak_type=True)"
    assert ShapedArray((5,), np.bool_).str_short() == "bool[5]"


def test_shaped_array_eq_and_hash():
    a = ShapedArray((2, 3), np.float32)
    b = ShapedArray([2, 3], "float32")
    assert a == b and hash(a) == hash(b)
    assert a != ShapedArray((2, 3), np.float32, weak_type=True)
    assert a != ShapedArray((3, 2), np.float32)
    assert a != ShapedArray((2, 3), np.int32)
    assert a != "f32[2,3]"
    assert len({a, b, a.update(weak_type=True)}) == 2


def test_shaped_array_properties():
    a = ShapedArray((2, 3), np.float32, weak_type=True)
    assert (a.ndim, a.size, a.shape, a.dtype) == (2, 6, (2, 3), f32)
    assert a.update(shape=(4,)) == ShapedArray((4,), np.float32, True)
    assert a.strip_weak_type() == ShapedArray((2, 3), np.float32)


@pytest.mark.parametrize(
    "value,aval",
    [
        (1.0, ShapedArray((), np.float32, True)),
        (1, ShapedArray((), np.int32, True)),
        (True, ShapedArray((), np.bool_)),
        (np.float32(1), ShapedArray((), np.float32)),
        (np.zeros((2,), np.int32), ShapedArray((2,), np.int32)),
        (jnp.zeros((2, 2)), ShapedArray((2, 2), np.float32)),
    ],
)
def test_get_aval(value, aval):
    assert core.get_aval(value) == aval


def test_tracer_repr_under_jit(capsys):
    @jax.jit
    def f(x, n):
        print(x)
        print(n)
        return x

    f(jnp.ones(3), 1)
    assert capsys.readouterr().out == (
        "Traced<ShapedArray(float32[3])>with<DynamicJaxprTrace>\n"
        "Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>\n"
    )


def test_tracer_shape_dtype_properties():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size)
        seen.update(weak_type=x.weak_type, len=len(x), aval=x.aval)
        return x

    jax.make_jaxpr(f)(jnp.ones((4, 2), jnp.int32))
    assert seen == dict(
        shape=(4, 2),
        dtype=i32,
        ndim=2,
        size=8,
        weak_type=False,
        len=4,
        aval=ShapedArray((4, 2), np.int32),
    )


def test_tracer_is_unhashable():
    def f(x):
        with pytest.raises(TypeError, match="unhashable"):
            hash(x)
        return x

    jax.make_jaxpr(f)(1.0)


# ----------------------------------------------------------------------------------------
# Leaked tracers


def _leak():
    leaked = []

    @jax.jit
    def f(x):
        leaked.append(x * 2)
        return x

    f(1.0)
    return leaked[0]


def test_leaked_tracer_used_eagerly():
    leak = _leak()
    with pytest.raises(UnexpectedTracerError) as info:
        leak + 1
    msg = str(info.value)
    assert "Encountered an unexpected tracer" in msg
    assert "float32[]" in msg
    assert "traced for jit" in msg
    assert "explicitly return their outputs" in msg


def test_leaked_tracer_used_in_a_later_jit():
    leak = _leak()
    with pytest.raises(UnexpectedTracerError):
        jax.jit(lambda y: y + leak)(1.0)


def test_leaked_tracer_passed_to_a_later_jit():
    leak = _leak()
    with pytest.raises(UnexpectedTracerError):
        jax.jit(lambda y: y + 1)(leak)


def test_leaked_tracer_used_in_make_jaxpr():
    leak = _leak()
    with pytest.raises(UnexpectedTracerError):
        jax.make_jaxpr(lambda y: jnp.sin(leak) * y)(1.0)


def test_leaked_tracer_is_an_error_class_like_jax():
    assert issubclass(UnexpectedTracerError, TypeError)


# ----------------------------------------------------------------------------------------
# Eager evaluation


def test_eager_ops_return_arrays_with_weak_types():
    x = jnp.ones(3)
    assert type(x + 1) is jax.Array
    assert not (x + 1).weak_type
    assert lax.add(1.0, 2.0).weak_type
    assert lax.add(1.0, 2.0).dtype == f32
    assert lax.add(1, 2).dtype == i32


def test_eager_checks_types_like_abstract_eval():
    with pytest.raises(TypeError, match="lax.add requires arguments to have the same"):
        lax.add(jnp.float32(1), jnp.int32(1))
    with pytest.raises(TypeError, match="sin does not accept dtype int32"):
        lax.sin(jnp.int32(1))


def test_eager_numpy_operands_are_canonicalized_and_copied():
    a = np.arange(3.0)  # float64
    out = lax.neg(a)
    assert out.dtype == f32
    b = np.arange(3, dtype=np.float32)
    out = lax.add(b, b)
    b[0] = 100.0
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])


def test_bind_under_eval_trace_is_current_by_default():
    assert core.find_cur_trace_is_eval()
    seen = []

    def f(x):
        seen.append(core.find_cur_trace_is_eval())
        return x

    jax.make_jaxpr(f)(1.0)
    assert seen == [False]
    assert core.find_cur_trace_is_eval()


# ----------------------------------------------------------------------------------------
# eval_jaxpr


EVAL_PROGRAMS = [
    (lambda x: jnp.sin(x) * 2.0, (np.float32(0.3),)),
    (
        lambda x, y: (x * y + 1.0, x - y),
        (np.arange(3.0, dtype=np.float32), np.float32(2)),
    ),
    (lambda x: x * jnp.arange(3.0) + 1, (np.ones(3, np.float32),)),
    (lambda x: jax.jit(lambda y: jnp.cos(y) + y)(x) * 3, (np.linspace(0, 1, 4),)),
    (lambda x: (x, 1.0), (np.float32(2),)),
]


@pytest.mark.parametrize("fun,args", EVAL_PROGRAMS)
def test_eval_jaxpr_equals_direct_evaluation(fun, args):
    closed = jax.make_jaxpr(fun)(*args)
    got = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    want = jax.tree_util.tree_leaves(fun(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert jnp.asarray(g).dtype == jnp.asarray(w).dtype


def test_jaxpr_as_fun():
    closed = jax.make_jaxpr(lambda x, y: x * y + 1.0)(2.0, 3.0)
    (out,) = core.jaxpr_as_fun(closed)(2.0, 3.0)
    assert float(out) == 7.0


def test_eval_jaxpr_under_another_trace_restages_it():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)
    again = jax.make_jaxpr(lambda x: eval_jaxpr(closed.jaxpr, closed.consts, x))(1.0)
    assert str(again) == str(closed)


def test_closed_jaxpr_accessors():
    c = jnp.arange(3.0)
    closed = jax.make_jaxpr(lambda x: (x * c, x.sum()))(jnp.ones(3))
    assert isinstance(closed, ClosedJaxpr)
    assert isinstance(closed.jaxpr, Jaxpr)
    assert len(closed.consts) == 1 and closed.consts[0] is c
    assert closed.in_avals == [ShapedArray((3,), np.float32)]
    assert closed.out_avals == [
        ShapedArray((3,), np.float32),
        ShapedArray((), np.float32),
    ]
    assert [e.primitive.name for e in closed.eqns] == ["mul", "reduce_sum"]
    assert closed.effects == frozenset()


# ----------------------------------------------------------------------------------------
# Typechecking


def _sin_mul_jaxpr():
    a, b, c = (
        Var(ShapedArray((), f32)),
        Var(ShapedArray((), f32)),
        Var(ShapedArray((), f32)),
    )
    two = Literal(np.float32(2.0), ShapedArray((), f32, weak_type=True))
    eqns = [JaxprEqn(sin_p, [a], {}, [b]), JaxprEqn(mul_p, [b, two], {}, [c])]
    return Jaxpr([], [a], [c], eqns), (a, b, c, two)


def test_typecheck_accepts_traced_jaxprs():
    for _, fun, args in PROGRAMS:
        typecheck_jaxpr(jax.make_jaxpr(fun)(*args).jaxpr)
    jaxpr, _ = _sin_mul_jaxpr()
    typecheck_jaxpr(jaxpr)
    assert str(jaxpr) == GOLDEN["sin_mul"]


def test_typecheck_rejects_wrong_output_type():
    jaxpr, (a, b, c, two) = _sin_mul_jaxpr()
    bad = Var(ShapedArray((3,), f32))
    jaxpr.eqns[1] = JaxprEqn(mul_p, [b, two], {}, [bad])
    jaxpr.outvars = [bad]
    with pytest.raises(JaxprTypeError, match="mul: declared output type f32.3. but"):
        typecheck_jaxpr(jaxpr)


def test_typecheck_rejects_use_before_definition():
    jaxpr, _ = _sin_mul_jaxpr()
    jaxpr.eqns.reverse()
    with pytest.raises(JaxprTypeError, match="used before it is defined"):
        typecheck_jaxpr(jaxpr)


def test_typecheck_rejects_double_definition():
    jaxpr, (a, b, c, two) = _sin_mul_jaxpr()
    jaxpr.eqns.append(JaxprEqn(sin_p, [a], {}, [b]))
    with pytest.raises(JaxprTypeError, match="defined twice"):
        typecheck_jaxpr(jaxpr)


def test_typecheck_rejects_undefined_output():
    jaxpr, _ = _sin_mul_jaxpr()
    jaxpr.outvars = [Var(ShapedArray((), f32))]
    with pytest.raises(
        JaxprTypeError, match="used before it is defined, in the outputs"
    ):
        typecheck_jaxpr(jaxpr)


def test_typecheck_rejects_ill_typed_equation():
    x = Var(ShapedArray((), f32))
    n = Var(ShapedArray((), i32))
    out = Var(ShapedArray((), f32))
    jaxpr = Jaxpr([], [x, n], [out], [JaxprEqn(add_p, [x, n], {}, [out])])
    with pytest.raises(TypeError, match="lax.add requires arguments to have the same"):
        typecheck_jaxpr(jaxpr)


def test_typecheck_rejects_missing_effects():
    effect = _TestEffect()
    log_p = _register_log_p(effect)
    try:
        x = Var(ShapedArray((), f32))
        jaxpr = Jaxpr([], [x], [x], [JaxprEqn(log_p, [x], {}, [], frozenset())])
        with pytest.raises(JaxprTypeError, match="missing effects"):
            typecheck_jaxpr(jaxpr)
    finally:
        _unregister(log_p)


# ----------------------------------------------------------------------------------------
# Dead-code elimination, with an effectful primitive defined here


class _TestEffect:
    def __repr__(self):
        return "TestEffect"


LOG = []


def _register_log_p(effect):
    """`test_log(x)`: records x on the host; no outputs; has an effect."""
    log_p = Primitive("test_log", multiple_results=True)

    def impl(x):
        LOG.append(np.asarray(x).item())
        return []

    impl_rules[log_p] = impl
    abstract_eval_rules[log_p] = lambda x: ([], {effect})
    return log_p


def _unregister(prim):
    del impl_rules[prim], abstract_eval_rules[prim]


@pytest.fixture
def log_p():
    effect = _TestEffect()
    prim = _register_log_p(effect)
    LOG.clear()
    yield prim
    _unregister(prim)


def _with_side_effect(log_p):
    def f(x):
        jnp.sin(x)  # unused and pure: dead code
        log_p.bind(x)  # unused but effectful: kept
        return x * 2.0

    return f


def test_effects_are_recorded_and_printed(log_p):
    closed = jax.make_jaxpr(_with_side_effect(log_p))(1.0)
    assert [e.primitive.name for e in closed.eqns] == ["sin", "test_log", "mul"]
    assert {repr(e) for e in closed.effects} == {"TestEffect"}
    assert str(closed) == (
        "{ lambda ; a:f32[]. let\n"
        "    _:f32[] = sin a\n"
        "    test_log a\n"
        "    b:f32[] = mul a 2.0:f32[]\n"
        "  in (b,) }"
    )


def test_dce_removes_unused_pure_equations_and_keeps_effects(log_p):
    closed = jax.make_jaxpr(_with_side_effect(log_p))(1.0)
    new, used_inputs = dce_jaxpr(closed.jaxpr)
    assert [e.primitive.name for e in new.eqns] == ["test_log", "mul"]
    assert used_inputs == [True]
    assert new.effects == closed.effects
    typecheck_jaxpr(new)


def test_dce_with_unused_outputs(log_p):
    def f(x, y):
        log_p.bind(y)
        return jnp.sin(x), jnp.cos(x) * y

    closed = jax.make_jaxpr(f)(1.0, 2.0)
    new, used_inputs = dce_jaxpr(closed.jaxpr, used_outputs=[True, False])
    assert [e.primitive.name for e in new.eqns] == ["test_log", "sin"]
    assert len(new.outvars) == 1
    assert used_inputs == [True, True]

    def g(x, y):
        return jnp.sin(x), jnp.cos(x) * y

    closed = jax.make_jaxpr(g)(1.0, 2.0)
    new, used_inputs = dce_jaxpr(closed.jaxpr, [True, False], prune_invars=True)
    assert used_inputs == [True, False]
    assert len(new.invars) == 1
    assert [e.primitive.name for e in new.eqns] == ["sin"]


def test_dce_drops_unused_constvars():
    c = jnp.arange(3.0)
    closed = jax.make_jaxpr(lambda x: ((x * c).sum(), x))(jnp.ones(3))
    new, _ = dce_jaxpr(closed.jaxpr, [False, True])
    assert new.constvars == [] and new.eqns == []


def test_jit_runs_effects_every_call_and_drops_dead_code(log_p):
    f = jax.jit(_with_side_effect(log_p))
    assert float(f(1.0)) == 2.0
    assert float(f(3.0)) == 6.0
    assert LOG == [1.0, 3.0]
    closed = f.lower(1.0).jaxpr
    assert [e.primitive.name for e in closed.eqns] == ["test_log", "mul"]


def test_effects_of_jaxpr_are_union_of_equations(log_p):
    def f(x):
        log_p.bind(x)
        return jax.jit(lambda y: log_p.bind(y) or y + 1)(x)

    closed = jax.make_jaxpr(f)(1.0)
    assert {repr(e) for e in closed.effects} == {"TestEffect"}
    assert closed.eqns[1].primitive.name == "jit"
    assert {repr(e) for e in closed.eqns[1].effects} == {"TestEffect"}


# ----------------------------------------------------------------------------------------
# The NumPy backend


@pytest.mark.numpy_backend
def test_backend_source_is_readable_python():
    lowered = jax.jit(lambda x, y: jnp.sin(x) * y + 1.0).lower(1.0, 2.0)
    src = lowered.as_text()
    assert src.startswith("def ")
    assert "np.sin(a)" in src  # compiled code calls NumPy's ufuncs
    assert "return [" in src


def test_backend_handles_names_that_are_python_keywords():
    # Variables number 213+ are named `if`, `in`, `is`, `or`, ... in jaxprs.
    def f(x):
        for _ in range(300):
            x = x + 1.0
        return x

    assert float(jax.jit(f)(0.0)) == 300.0


def test_jaxprs_used_twice_print_once_in_a_let_prelude():
    # JAX 0.10.2 prints a sub-jaxpr that occurs more than once (the same object, as a
    # jitted function called twice with the same types) once, named after the call.
    g = jax.jit(lambda y: jnp.sin(y) * 2)
    text = str(jax.make_jaxpr(lambda x: g(g(x)) + g(x))(1.0))
    assert text == (
        "let lambda = { lambda ; a:f32[]. let\n"
        "    b:f32[] = sin a\n"
        "    c:f32[] = mul b 2.0:f32[]\n"
        "  in (c,) } in\n"
        "{ lambda ; d:f32[]. let\n"
        "    e:f32[] = jit[name=<lambda> jaxpr=lambda] d\n"
        "    f:f32[] = jit[name=<lambda> jaxpr=lambda] e\n"
        "    g:f32[] = jit[name=<lambda> jaxpr=lambda] d\n"
        "    h:f32[] = add f g\n"
        "  in (h,) }"
    )
    cond_text = str(jax.make_jaxpr(lambda x: lax.cond(x > 0, g, g, x))(1.0))
    assert cond_text.startswith("let jaxpr = { lambda ; a:f32[]. let\n")
    assert "let lambda = { lambda ; c:f32[]. let" in cond_text
    assert "cond[branches=(jaxpr jaxpr)] h f" in cond_text


def test_tracers_and_keys_are_instances_of_array_as_in_jax():
    checks = []

    def f(x):
        checks.append(isinstance(x, jax.Array))
        return x * 2

    jax.jit(f)(1.0)
    jax.grad(f)(1.0)
    jax.vmap(f)(jnp.ones(2))
    assert checks == [True, True, True]
    assert isinstance(jnp.ones(2), jax.Array)
    assert isinstance(jax.random.key(0), jax.Array)
    assert not isinstance(1.0, jax.Array) and not isinstance(np.ones(2), jax.Array)
