#!/usr/bin/python3
"""Buggy on purpose (bench/drivers/README.md): a Redlock-style lock over five nodes that
counts a SET whose reply timed out as a vote ("it probably landed").

Why it is realistic: a timeout after sending reads like "the server is slow, the write went
through", and counting it keeps the lock available while a node is sluggish; with every node
answering it is the baseline exactly. Cut a client from a majority of the nodes (their SETs
never arrive, their replies time out) while another client takes the majority: both count
three votes. Class: needs a partition of a majority of a multi-node lock's nodes.
Baseline: redlock_quorum.py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redlock_quorum  # noqa: E402

if __name__ == "__main__":
    redlock_quorum.main(count_unanswered=True,
                        name="redlock over 5 nodes, a timed-out SET counted as a vote")
