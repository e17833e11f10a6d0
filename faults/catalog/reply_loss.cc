// reply-loss: requests reach the node, replies are dropped (the outcome is unknown).
#include "faults/catalog/catalog.h"
#include "faults/network_effects.h"

namespace locklab::faults {

namespace {

FaultDescriptor ReplyLossFault() {
  FaultDescriptor d;
  d.traits.needs = {LockSurface::kRequestStream};
  d.info = {"reply-loss", "requests reach the node, replies are dropped: the outcome is unknown",
            {{"target", "any", kTargetParamHelp}, {"point", "", kCommandPointParamHelp}}};
  d.client_side = true;
  d.make_effect = [](const FaultOptions& o) { return std::make_unique<ReplyLossEffect>(o); };
  // A third of the draws land on a client's own acquire, renewals or release.
  d.draw = [](const FaultDrawContext& c, Rng& rng, FaultOptions* f) { DrawCommandArm(c, rng, f, 1.0 / 3); };
  d.hunt.disturbs_commands = true;
  d.hunt.simpler_params = {"target"};
  d.sentence = [](const FaultOptions& f, const std::string& window) {
    return "reply-loss drops the lock nodes' replies to " + CutClientText(f) + " for " + window;
  };
  d.style.colour = "#3f8fd0";
  d.style.noun = "reply loss";
  d.style.label = "reply loss[ {links|nodes}]";
  d.style.story = "replies on the links {links:10|nodes|'the lock node'} were dropped for"
      " {duration}";
  d.style.after = "came back from a {duration} {noun} and ";
  d.traits.arm_points = CommandPoints();
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kReplyLossRegistered(110, &ReplyLossFault);

}  // namespace locklab::faults
