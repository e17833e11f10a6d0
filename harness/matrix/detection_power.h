// DetectionPowerMarkdown: the "Detection power" section that ends a quick matrix.md.
//
// A single matrix run says what one seed found; how often the matrix finds each cell's
// violation is a property of the cell presets, measured over many seeds by
// `bench/detection_power --write scenarios/matrix/detection-power.json DIR...`. This reads
// that file and tells the reader, for the cells of this table, how many of the measured
// runs found a violation, which fell short of every run, and which rows were not measured
// (a team's own driver). The figures are the file's, never this run's: the section says
// when, at which git revision (when the file records one) and with which seeds they were
// measured. The file's other records (plan ids, presets, command, machine) are for readers
// of the file and are not read here. Pure function; thread-compatible.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace locklab::harness {

// `cells`: (lock, fault) of every applicable cell in the table. `mode`: "quick" or "full";
// the figures are only shown for the mode they were measured in. Returns "" when the file
// does not exist or does not apply; a one-line note when it cannot be read.
// Whether a cell's measured letters (detection-power.json "verdicts") are a measurement: some
// run judged it (all n/a: the measurement did not run it). One rule for matrix.md's "not in
// the measurement" and --write-expect's `# measured:` note.
bool DetectionPowerMeasured(const std::vector<std::string>& verdicts);

std::string DetectionPowerMarkdown(const std::string& json_path,
                                   const std::vector<std::pair<std::string, std::string>>& cells,
                                   const std::string& mode);

}  // namespace locklab::harness
