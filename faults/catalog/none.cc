// none: the baseline every lock must pass. No effect, nothing drawn.
#include "faults/catalog/catalog.h"

namespace locklab::faults {

namespace {

FaultDescriptor NoneFault() {
  FaultDescriptor d;
  d.info = {"none", "no fault: the baseline every lock must pass", {}};
  d.client_side = true;  // it touches nothing, so it runs against any servers
  d.style.colour = "#7a7a9a";
  d.style.noun = "no fault";
  return d;
}

}  // namespace

// Listed after the faults whose order is lower (`locklab list` and its --json keep it).
const BuiltInFault kNoneRegistered(0, &NoneFault);

}  // namespace locklab::faults
