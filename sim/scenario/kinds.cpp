// See kinds.h.
#include "sim/scenario/kinds.h"

namespace redlab::scenario {

std::string_view field_type_name(FieldType type) {
  switch (type) {
    case FieldType::Text:
      return "text";
    case FieldType::CommandLine:
      return "command line";
    case FieldType::Number:
      return "number";
    case FieldType::Count:
      return "count";
    case FieldType::Duration:
      return "duration";
    case FieldType::SignedDuration:
      return "signed duration";
    case FieldType::Bool:
      return "bool";
    case FieldType::List:
      return "list";
    case FieldType::Commands:
      return "list of command lines";
    case FieldType::Script:
      return "script name";
    case FieldType::Resource:
      return "resource name";
    case FieldType::Steps:
      return "steps";
    case FieldType::Cond:
      return "condition";
    case FieldType::Says:
      return "Text";
    case FieldType::Actor:
      return "actor or instance name";
    case FieldType::Server:
      return "server name";
  }
  return "?";
}

std::vector<std::string> choice_words(const char* choices) {
  std::vector<std::string> out;
  std::string word;
  for (const char* c = choices; c && *c; c++) {
    if (*c == ' ') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += *c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

std::string choice_list(const char* choices, bool quoted) {
  std::vector<std::string> words = choice_words(choices);
  std::string out;
  for (size_t i = 0; i < words.size(); i++) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += quoted ? "\"" + words[i] + "\"" : words[i];
  }
  return out;
}

std::string field_type_doc(const FieldSpec& f) {
  if (f.choices) {
    std::string out;
    std::vector<std::string> words = choice_words(f.choices);
    for (size_t i = 0; i < words.size(); i++)
      out += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + ("`" + words[i] + "`");
    return out;
  }
  std::string out(field_type_name(f.type));
  if (*f.unit) out += std::string(" (") + f.unit + ")";
  return out;
}

std::string field_default_doc(const FieldSpec& f) {
  if (f.required) return std::string("**required**") + (*f.absent ? ", " : "") + f.absent;
  return *f.absent ? f.absent : "—";
}

std::string field_inline_doc(const FieldSpec& f) {
  std::string out = std::string("`") + f.key + "`: " + field_type_doc(f);
  if (f.required) return out + ", **required**" + (*f.absent ? std::string(", ") + f.absent : "");
  if (*f.absent) out += std::string(" (absent: ") + f.absent + ")";
  return out;
}

const FieldSpec* find_field(std::span<const FieldSpec> fields, std::string_view key) {
  for (const FieldSpec& f : fields)
    if (key == f.key) return &f;
  return nullptr;
}

const StepKind* find_step_kind(std::string_view name) {
  for (const StepKind* k : step_kinds())
    if (name == k->name) return k;
  return nullptr;
}

const FaultKind* find_fault_kind(std::string_view name) {
  for (const FaultKind* k : fault_kinds())
    if (name == k->name) return k;
  return nullptr;
}

}  // namespace redlab::scenario
