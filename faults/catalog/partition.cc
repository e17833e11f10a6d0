// partition: cuts (client, node) links in the fault proxy.
#include "faults/catalog/catalog.h"
#include "faults/network_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor PartitionFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kServerProcess};
  d.info = {"partition", "cuts (client, node) links in the fault proxy",
            {{"shape", "isolate-clients", "isolate-clients, isolate-node or majorities-ring"},
             {"mode", "hold", "hold (black hole) or reset (RST)"},
             {"direction", "both", "both, up (requests) or down (replies)"},
             {"resource", "false", "cut the target clients from the resource node too"},
             {"target", "any", kTargetParamHelp},
             {"point", "", kCommandPointParamHelp}}};
  d.client_side = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<PartitionEffect>(o); };
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) {
    std::vector<std::string> shapes = {"isolate-clients", "isolate-node"};
    if (c.nodes >= 3) shapes.push_back("majorities-ring");
    f->params["shape"] = Pick(rng, shapes);
    if (f->params["shape"] == "isolate-node") f->nodes = DrawNodes(c, rng);
    f->params["mode"] = rng.Unit() < 0.7 ? "hold" : "reset";
    f->params["direction"] = Pick(rng, std::vector<std::string>{"both", "both", "up", "down"});
    f->params["target"] = rng.Unit() < 0.5 ? "any" : "holder";
    // A fifth of the draws cut one client at its own acquire, renewals or release.
    if (DrawCommandArm(c, rng, f, 0.2)) {
      f->params["shape"] = "isolate-clients";
      f->nodes.clear();
    }
  };
  d.hunt.disturbs_commands = true;
  d.hunt.simpler_params = {"direction", "mode", "resource", "target"};
  d.sentence = [](const FaultOptions& f, const std::string& window) {
    const std::string shape = f.Param("shape", "isolate-clients");
    return "partition (" + shape + (shape == "isolate-node" ? " " + NodeListText(f.nodes, "n1") : "") + ", " +
           f.Param("direction", "both") + " ways, " + f.Param("mode", "hold") + ")" +
           " cuts " + (shape == "isolate-clients" ? CutClientText(f) : "the links") + " for " + window;
  };
  d.style.colour = "#0f9fb0";
  d.style.noun = "partition";
  d.style.label = "partition[ {links|nodes}]";
  d.style.story = "the network cut the links {links:10|nodes|'the lock node'} for {duration}";
  d.style.after = "came back from a {duration} {noun} and ";
  d.traits.arm_points = CommandPoints();
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kPartitionRegistered(100, &PartitionFault);

}  // namespace locklab::faults
