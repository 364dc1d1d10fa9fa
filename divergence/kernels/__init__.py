"""The compiled-kernel framework: ``@kernel`` and its argument types (``compiled``), the
ahead-of-time build of every kernel into one extension module (``_aot``: ``python -m
divergence.kernels._aot --host``), and that build with its stamp (``_kernels*.so``,
``_kernels.json``, made by ``make``), and on a first run without that build the statistics'
kernels compiled beside the job (``warm``), which with the shorter lengths mined beside a request is
what a call may start only when asked for two processes (``processes``: one unless asked). The
kernels themselves live with their jobs (``prepare.tallies``, ``prepare.compression``,
``mining.mining_kernel``, ``mining.lattice``, ``stats.fisher``).

May import: errors.
"""
