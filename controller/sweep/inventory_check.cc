#include "controller/sweep/inventory_check.h"

#include <cctype>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/net_address.h"
#include "base/status_macros.h"

namespace fabricctl::controller {
namespace {

constexpr size_t kMaxNameLength = 253;  // a DNS name
constexpr int kMaxInterfaces = 1024;
constexpr int kMaxAddressesPerInterface = 64;
constexpr int kMaxRdmaDevices = 256;
constexpr int kMaxPortsPerDevice = 16;
constexpr int kMaxGpus = 64;
constexpr int kMaxLabels = 64;
constexpr size_t kMaxInventoryString = 4096;

}  // namespace

absl::Status ValidateNodeName(const std::string& name, const std::string& field) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is empty"));
  if (name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is longer than ", kMaxNameLength, " characters"));
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " '", name, "' may hold only letters, digits, '-', '.' and '_'"));
    }
  }
  return absl::OkStatus();
}

namespace {

// Every string of a message (nested messages, repeated fields and map entries included) at
// most `max_length` bytes; the error names the field's path.
absl::Status BoundStrings(const google::protobuf::Message& message, size_t max_length,
                          const std::string& path) {
  const auto* reflection = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const auto* field : fields) {
    const std::string where = absl::StrCat(path, ".", field->name());
    const int n = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < n; ++i) {
      if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_STRING) {
        std::string scratch;
        const std::string& value =
            field->is_repeated()
                ? reflection->GetRepeatedStringReference(message, field, i, &scratch)
                : reflection->GetStringReference(message, field, &scratch);
        if (value.size() > max_length) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, " is ", value.size(), " bytes long; at most ", max_length));
        }
      } else if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
        const auto& child = field->is_repeated() ? reflection->GetRepeatedMessage(message, field, i)
                                                 : reflection->GetMessage(message, field);
        RETURN_IF_ERROR(BoundStrings(child, max_length, where));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateInventory(const v1::NodeInventory& inventory) {
  RETURN_IF_ERROR(ValidateNodeName(inventory.node_name(), "inventory.node_name"));
  // No field of an inventory needs more than a path's length; the registry keeps it whole.
  RETURN_IF_ERROR(BoundStrings(inventory, kMaxInventoryString, "inventory"));
  if (auto a = ParseHostPort(inventory.agent_address(), "inventory.agent_address"); !a.ok()) {
    return a.status();
  } else if (a->port == 0) {
    return absl::InvalidArgumentError("inventory.agent_address: port 0 cannot be dialled");
  }
  auto bound = [](int size, int max, const char* field) {
    return size <= max ? absl::OkStatus()
                       : absl::InvalidArgumentError(
                             absl::StrCat(field, " has ", size, " entries; at most ", max));
  };
  for (auto s :
       {bound(inventory.interfaces_size(), kMaxInterfaces, "inventory.interfaces"),
        bound(inventory.rdma_devices_size(), kMaxRdmaDevices, "inventory.rdma_devices"),
        bound(inventory.gpus_size(), kMaxGpus, "inventory.gpus"),
        bound(static_cast<int>(inventory.labels_size()), kMaxLabels, "inventory.labels")}) {
    if (!s.ok()) return s;
  }
  for (const auto& itf : inventory.interfaces()) {
    if (auto s = bound(itf.addresses_size(), kMaxAddressesPerInterface,
                       "inventory.interfaces.addresses");
        !s.ok()) {
      return s;
    }
  }
  for (const auto& dev : inventory.rdma_devices()) {
    if (auto s = bound(dev.ports_size(), kMaxPortsPerDevice, "inventory.rdma_devices.ports");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace fabricctl::controller
