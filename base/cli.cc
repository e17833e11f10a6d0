#include "base/cli.h"

#include <algorithm>

namespace locklab {
namespace {

constexpr size_t kWidth = 100;      // help lines wrap here
constexpr size_t kHelpColumn = 30;  // where a flag's help starts

// "--pause, --fault-duration DURATION"
std::string FlagColumn(const FlagSpec& f) {
  std::string s = f.name;
  for (const auto& a : f.aliases) s += ", " + a;
  if (!f.value.empty()) s += " " + f.value;
  return s;
}

// `text` wrapped at kWidth, the first line starting at column `first`, the rest indented
// to `indent`.
std::string Wrap(const std::string& text, size_t first, size_t indent) {
  std::string out;
  size_t col = first;
  bool line_empty = true;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find(' ', i);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(i, end - i);
    i = end + 1;
    if (word.empty()) continue;
    if (!line_empty && col + 1 + word.size() > kWidth) {
      out += "\n" + std::string(indent, ' ');
      col = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += " ";
      ++col;
    }
    out += word;
    col += word.size();
    line_empty = false;
  }
  return out;
}

void AddRow(std::string* out, const std::string& left, const std::string& help) {
  std::string row = "  " + left;
  if (row.size() + 2 > kHelpColumn) {
    *out += row + "\n" + std::string(kHelpColumn, ' ');
  } else {
    *out += row + std::string(kHelpColumn - row.size(), ' ');
  }
  *out += Wrap(help, kHelpColumn, kHelpColumn) + "\n";
}

std::string Join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

}  // namespace

const FlagSpec* CommandSpec::Find(std::string_view flag) const {
  for (const auto& f : flags) {
    if (f.name == flag) return &f;
    for (const auto& a : f.aliases) {
      if (a == flag) return &f;
    }
  }
  return nullptr;
}

std::string HelpText(const CommandSpec& spec) {
  std::string out;
  for (size_t i = 0; i < spec.synopsis.size(); ++i) {
    out += (i == 0 ? "usage: " : "       ") + spec.synopsis[i] + "\n";
  }
  if (!spec.summary.empty()) {
    std::string about = spec.summary + "." + (spec.description.empty() ? "" : " " + spec.description);
    out += "\n" + Wrap(about, 0, 0) + "\n";
  }
  // Groups in the order their first flag appears.
  std::vector<std::string> groups;
  for (const auto& f : spec.flags) {
    if (std::find(groups.begin(), groups.end(), f.group) == groups.end()) groups.push_back(f.group);
  }
  bool durations = false;
  for (const auto& g : groups) {
    out += "\n" + (g.empty() ? std::string("flags") : g) + ":\n";
    for (const auto& f : spec.flags) {
      if (f.group != g) continue;
      durations = durations || f.kind == FlagKind::kDuration;
      AddRow(&out, FlagColumn(f), f.help);
    }
  }
  out += "\n";
  AddRow(&out, "-h, --help", "this help");
  if (durations) {
    out += "\n" + Wrap("DURATION is a whole number and a unit: 500ms, 6s, 2m or 1h; a bare number is "
                       "milliseconds (as in scenario files' _ms keys).", 0, 0) + "\n";
  }
  if (!spec.notes.empty()) out += "\n" + spec.notes + (spec.notes.back() == '\n' ? "" : "\n");
  return out;
}

std::string CommandListText(std::span<const CommandSpec* const> commands) {
  std::string out = "usage: locklab <command> [ARGS...]\n\ncommands:\n";
  size_t width = 0;
  for (const CommandSpec* c : commands) {
    if (!c->hidden) width = std::max(width, c->name.size());
  }
  for (const CommandSpec* c : commands) {
    if (c->hidden) continue;
    std::string left = "  " + c->name + std::string(width - c->name.size() + 2, ' ');
    out += left + Wrap(c->summary, left.size(), left.size()) + "\n";
  }
  out += "\nlocklab <command> --help for its flags; locklab --version for the version.\n";
  return out;
}

std::string BashCompletion(std::span<const CommandSpec* const> commands) {
  std::vector<std::string> names;
  for (const CommandSpec* c : commands) {
    if (!c->hidden) names.push_back(c->name);
  }
  std::string out =
      "# bash completion for locklab, made by `locklab completion bash` from the commands' flag\n"
      "# tables. Load it with: source <(./locklab completion bash)\n"
      "_locklab() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  COMPREPLY=()\n"
      "  if [[ $COMP_CWORD -eq 1 ]]; then\n"
      "    COMPREPLY=($(compgen -W \"" + Join(names) + " --help --version\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  local flags=\"\" paths=\"\" values=\"\" subs=\"\"\n"
      "  case \"${COMP_WORDS[1]}\" in\n";
  for (const CommandSpec* c : commands) {
    if (c->hidden) continue;
    const std::vector<std::string>& subs = c->subcommands;
    // One flag list per sub-command (or one for the command).
    auto lists = [&](const std::string& sub) {
      std::vector<std::string> flags, paths, values;
      for (const auto& f : c->flags) {
        if (!sub.empty() && f.subcommand != sub) continue;
        std::vector<std::string> spellings = {f.name};
        spellings.insert(spellings.end(), f.aliases.begin(), f.aliases.end());
        for (const auto& s : spellings) {
          flags.push_back(s);
          if (f.kind == FlagKind::kPath) paths.push_back(s);
          else if (f.kind != FlagKind::kSwitch) values.push_back(s);
        }
      }
      flags.push_back("--help");
      return "flags=\"" + Join(flags) + "\" paths=\"" + Join(paths) + "\" values=\"" +
             Join(values) + "\"";
    };
    out += "    " + c->name + ")\n";
    if (subs.empty()) {
      out += "      " + lists("") + " ;;\n";
      continue;
    }
    out += "      subs=\"" + Join(subs) + "\"\n      case \"${COMP_WORDS[2]}\" in\n";
    for (const auto& s : subs) out += "        " + s + ") " + lists(s) + " ;;\n";
    out += "        *) " + lists("-") + " ;;\n";
    out += "      esac ;;\n";
  }
  out +=
      "  esac\n"
      "  if [[ -n $subs && $COMP_CWORD -eq 2 ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$subs --help\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  if [[ \" $paths \" == *\" $prev \"* ]]; then\n"
      "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "  elif [[ \" $values \" == *\" $prev \"* ]]; then\n"
      "    return  # a value: nothing to offer\n"
      "  elif [[ $cur == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
      "  else\n"
      "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "  fi\n"
      "}\n"
      "complete -F _locklab locklab\n";
  return out;
}

}  // namespace locklab
