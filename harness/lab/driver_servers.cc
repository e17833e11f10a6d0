#include "harness/lab/driver_servers.h"

#include "faults/fault.h"
#include "locks/backend.h"
#include "locks/driver_lock.h"
#include "locks/lock.h"

namespace locklab::harness {

Status ProbeDriverServers(const std::string& path, const std::vector<std::string>& args,
                          Millis timeout, DriverServers* out) {
  *out = DriverServers();
  locks::DriverHello hello;
  Status s = locks::ProbeDriver(path, args, timeout, &hello);
  if (s.code() == Status::Code::kUsage) return s;  // a bad hello: the driver's bad input
  if (!s.ok()) {
    out->why_not_probed = s.message();
    return Status::Ok();
  }
  *out = ServersFromHello(hello);
  return Status::Ok();
}

DriverServers ServersFromHello(const locks::DriverHello& hello) {
  DriverServers out;
  out.backend = hello.backend;
  out.nodes = hello.nodes;
  out.sentinel = hello.sentinel;
  out.probed = true;
  out.hello_line = hello.line;
  return out;
}

Status DriverServersOf(const std::string& path, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& knobs, DriverServers* out) {
  auto known = knobs.find("hello");
  locks::DriverHello hello;
  if (known == knobs.end() || known->second.empty()) {
    // Read once in this process already (the run's checks, an earlier trial): not again.
    if (locks::ProbedHello(path, args, &hello)) {
      *out = ServersFromHello(hello);
      return Status::Ok();
    }
    return ProbeDriverServers(path, args, locks::DriverStartTimeout(knobs), out);
  }
  std::string bad = locks::CheckHello(known->second, &hello);
  if (!bad.empty()) return Status::Usage("driver " + path + ": knob 'hello': " + bad);
  locks::RememberProbedHello(path, args, hello);
  *out = ServersFromHello(hello);
  out->from_knob = true;
  return Status::Ok();
}

bool DriverFaultApplies(locks::Backend backend, const std::string& fault_id) {
  return faults::FaultFits(fault_id, locks::SurfacesOf(backend));
}

std::string DriverFaultWhyNot(const DriverServers& servers, const std::string& fault_id) {
  if (!DriverFaultApplies(servers.backend, fault_id)) {
    return "fault " + fault_id + " does not apply to the " + locks::BackendName(servers.backend) +
           " servers the driver's hello asks for";
  }
  if (fault_id == "failover" && !servers.sentinel) {
    return "failover needs a driver that finds the master through Sentinel (hello \"sentinel\": "
           "true); this one gets fixed node addresses";
  }
  return "";
}

}  // namespace locklab::harness
