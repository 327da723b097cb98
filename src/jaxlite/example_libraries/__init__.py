"""Small, dependency-free libraries shipped with JAX as examples, kept for the code
that uses them: `optimizers` (first-order optimizers as `(init, update, get_params)`
triples over pytrees) and `stax` (neural-network layers as `(init_fun, apply_fun)`
pairs). Import the submodules explicitly, as in JAX:
`from jaxlite.example_libraries import optimizers, stax`.
"""
