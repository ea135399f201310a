#include "base/hostlist.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fabricctl {
namespace {

// Splits at commas outside brackets.
absl::StatusOr<std::vector<std::string>> SplitTerms(const std::string& text,
                                                    const std::string& what) {
  std::vector<std::string> terms;
  std::string current;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[') {
      if (++depth > 1)
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": nested '[' at character ", i + 1, " of '", text, "'"));
    } else if (c == ']') {
      if (--depth < 0)
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": ']' without '[' at character ", i + 1, " of '", text, "'"));
    } else if (c == ',' && depth == 0) {
      terms.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  if (depth != 0)
    return absl::InvalidArgumentError(absl::StrCat(what, ": '[' without ']' in '", text, "'"));
  terms.push_back(current);
  return terms;
}

// The values of one bracket's body: "1-4,7", "01-10"; at most `max_values` of them in all,
// counted before any is made (many long ranges in one bracket cost nothing to refuse).
absl::StatusOr<std::vector<std::string>> ExpandRanges(const std::string& body,
                                                      const std::string& what, size_t max_values) {
  std::vector<std::string> out;
  uint64_t total = 0;
  for (absl::string_view part : absl::StrSplit(body, ',')) {
    const std::string p(absl::StripAsciiWhitespace(part));
    auto bad = [&] {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": '[", body, "]': '", p, "' is not a number or a range LOW-HIGH"));
    };
    const size_t dash = p.find('-');
    const std::string low = p.substr(0, dash);
    const std::string high = dash == std::string::npos ? low : p.substr(dash + 1);
    uint64_t a = 0, b = 0;
    if (low.empty() || high.empty() || low.find_first_not_of("0123456789") != std::string::npos ||
        high.find_first_not_of("0123456789") != std::string::npos || low.size() > 9 ||
        high.size() > 9 || !absl::SimpleAtoi(low, &a) || !absl::SimpleAtoi(high, &b)) {
      return bad();
    }
    if (b < a) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": '[", body, "]': range ", p, " runs backwards"));
    }
    if (b - a > 100000) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": '[", body, "]': range ", p, " is too long"));
    }
    total += b - a + 1;
    if (total > max_values) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": '[", body.substr(0, 64),
                                                     body.size() > 64 ? "..." : "",
                                                     "]' names more than ", max_values, " hosts"));
    }
  }
  for (absl::string_view part : absl::StrSplit(body, ',')) {
    const std::string p(absl::StripAsciiWhitespace(part));
    const size_t dash = p.find('-');
    const std::string low = p.substr(0, dash);
    const std::string high = dash == std::string::npos ? low : p.substr(dash + 1);
    uint64_t a = 0, b = 0;
    (void)absl::SimpleAtoi(low, &a);
    (void)absl::SimpleAtoi(high, &b);
    const size_t width = low.size() > 1 && low[0] == '0' ? low.size() : 0;  // zero padding
    for (uint64_t v = a; v <= b; ++v) {
      std::string digits = absl::StrCat(v);
      if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
      out.push_back(std::move(digits));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandHostlist(const std::string& expression,
                                                        const std::string& what, size_t max_hosts) {
  auto terms = SplitTerms(expression, what);
  if (!terms.ok()) return terms.status();
  std::vector<std::string> out;
  std::set<std::string> seen;
  size_t generated = 0;
  for (const std::string& raw : *terms) {
    const std::string term(absl::StripAsciiWhitespace(raw));
    if (term.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, expression.find_first_not_of(" \t\n,") == std::string::npos
                                 ? ": the node list is empty"
                                 : absl::StrCat(": an empty name in '", expression, "'")));
    }
    // Expand bracket by bracket, left to right: a cross product of the alternatives.
    std::vector<std::string> names = {""};
    size_t i = 0;
    while (i < term.size()) {
      const size_t open = term.find('[', i);
      const std::string literal =
          term.substr(i, open == std::string::npos ? std::string::npos : open - i);
      for (auto& n : names) n += literal;
      if (open == std::string::npos) break;
      const size_t close = term.find(']', open);
      auto values = ExpandRanges(term.substr(open + 1, close - open - 1), what, max_hosts);
      if (!values.ok()) return values.status();
      if (names.size() * values->size() > max_hosts) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": '", term, "' names more than ", max_hosts, " hosts"));
      }
      std::vector<std::string> next;
      next.reserve(names.size() * values->size());
      for (const auto& n : names) {
        for (const auto& v : *values) next.push_back(n + v);
      }
      names = std::move(next);
      i = close + 1;
    }
    // Counted as made, duplicates too: repeating a large term cannot make more than the cap.
    generated += names.size();
    if (generated > max_hosts) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": more than ", max_hosts, " hosts"));
    }
    for (auto& n : names) {
      if (seen.insert(n).second) out.push_back(std::move(n));
      if (out.size() > max_hosts) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": more than ", max_hosts, " hosts"));
      }
    }
  }
  return out;
}

}  // namespace fabricctl
