// The lab's topology as data: the servers a trial can have (lock nodes n1..n5 for Redlock,
// the resource node, n1's replica r1 and the sentinels s1..s3 of the failover fault), their
// roles, container ports and data volumes, and how the `locklab` harness reaches them.
//
// `locklab cluster topology [--json]` prints it. The lab itself starts these servers on free
// loopback ports (LabCluster, SentinelTopology); compose.yaml runs the same servers as
// containers on the standard ports, and tests/compose_topology_test.py checks compose.yaml
// against this description, so the two cannot drift apart unnoticed. Everything here is
// derived from the code that starts the lab (the lock registry's largest node count,
// SentinelTopology's constants and sentinel.conf lines, the fault registry). Pure function;
// thread-safe.
#pragma once

#include <nlohmann/json.hpp>

namespace locklab::harness {

nlohmann::ordered_json LabTopology();

}  // namespace locklab::harness
