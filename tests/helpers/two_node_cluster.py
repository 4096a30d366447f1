"""Start a two-node Ray cluster on this machine (one CPU per node), print its address,
and keep it up until standard input closes; then shut down exactly these nodes.

Used by tests/test_cluster.py as a subprocess, so that stopping the cluster
never touches any other Ray instance on the machine (``ray stop`` would).
"""

import sys

from ray.cluster_utils import Cluster

cluster = Cluster(initialize_head=True,
                  head_node_args={"num_cpus": 1, "include_dashboard": False})
cluster.add_node(num_cpus=1)
cluster.wait_for_nodes()
print(cluster.address, flush=True)
try:
    sys.stdin.read()
finally:
    cluster.shutdown()
