#include "base/utf8.h"

#include <vector>

namespace fabricctl {
namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF), or 0.
size_t SequenceAt(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

bool IsValid(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace

std::string ValidUtf8(const std::string& text) {
  if (IsValid(text)) return text;
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

namespace {

// U+FFFE or U+FFFF (EF BF BE, EF BF BF) at text[i].
bool NonCharacterAt(const std::string& text, size_t i) {
  return i + 2 < text.size() && static_cast<unsigned char>(text[i]) == 0xEF &&
         static_cast<unsigned char>(text[i + 1]) == 0xBF &&
         (static_cast<unsigned char>(text[i + 2]) == 0xBE ||
          static_cast<unsigned char>(text[i + 2]) == 0xBF);
}

}  // namespace

std::string PrintableText(const std::string& text) {
  std::string valid = ValidUtf8(text);
  std::string out;
  out.reserve(valid.size());
  for (size_t i = 0; i < valid.size(); ++i) {
    const auto c = static_cast<unsigned char>(valid[i]);
    if (c == '\t' || c == '\n' || c == '\r') {
      out += ' ';
    } else if (c < 0x20 || c == 0x7F) {
      out += "\xEF\xBF\xBD";
    } else if (c == 0xC2 && i + 1 < valid.size() &&
               static_cast<unsigned char>(valid[i + 1]) <= 0x9F) {
      out += "\xEF\xBF\xBD";  // a C1 control (U+0080..U+009F), e.g. a one-byte CSI
      ++i;
    } else if (NonCharacterAt(valid, i)) {
      out += "\xEF\xBF\xBD";  // U+FFFE or U+FFFF: no XML document may hold them
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {

bool IsPrintable(const std::string& text) {
  if (!IsValid(text)) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F || NonCharacterAt(text, i)) return false;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      return false;
    }
  }
  return true;
}

int SanitizeWith(google::protobuf::Message* message, bool (*ok)(const std::string&),
                 std::string (*fix)(const std::string&)) {
  using google::protobuf::FieldDescriptor;
  const auto* reflection = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  int changed = 0;
  for (const FieldDescriptor* field : fields) {
    const int n = field->is_repeated() ? reflection->FieldSize(*message, field) : 1;
    for (int i = 0; i < n; ++i) {
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
          field->type() == FieldDescriptor::TYPE_STRING) {
        std::string scratch;
        const std::string& value =
            field->is_repeated()
                ? reflection->GetRepeatedStringReference(*message, field, i, &scratch)
                : reflection->GetStringReference(*message, field, &scratch);
        if (ok(value)) continue;
        std::string fixed = fix(value);
        if (field->is_repeated()) {
          reflection->SetRepeatedString(message, field, i, std::move(fixed));
        } else {
          reflection->SetString(message, field, std::move(fixed));
        }
        ++changed;
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        changed += SanitizeWith(field->is_repeated()
                                    ? reflection->MutableRepeatedMessage(message, field, i)
                                    : reflection->MutableMessage(message, field),
                                ok, fix);
      }
    }
  }
  return changed;
}

}  // namespace

int SanitizeUtf8(google::protobuf::Message* message) {
  return SanitizeWith(message, IsValid, ValidUtf8);
}

int SanitizeText(google::protobuf::Message* message) {
  return SanitizeWith(message, IsPrintable, PrintableText);
}

}  // namespace fabricctl
