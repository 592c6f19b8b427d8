# Scaffold storage (adversary 8): the chunk DAG against the spec, recompute depths on hand-built
# graphs, exhaustive search for tiny m, and the experiments' invariants (docs/scaffold-depth.md).
wp_add_test(scaffold_depth_test SOURCES scaffold_depth_test.cc LIBS wp_scaffold)
