// CcAlgorithm: a congestion-control algorithm as a scenario selects it
// (`fabric.cc.algorithm`, `traffic[i].cc`): its name, its parameter table,
// and a config built from that table that makes one algorithm object per QP.
// The list of algorithms is cc_algorithms(); adding one is its own file
// (the algorithm, its config struct and its Fields table) plus one line there.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <typeinfo>

#include "models/cc/congestion_control.h"
#include "sim/params.h"

namespace rdmasim {

// One algorithm's settings, as read from a scenario; shared (read only) by
// every QP that uses them, for the whole run.
class CcConfig {
 public:
  virtual ~CcConfig() = default;
  virtual const char* algorithm() const = 0;
  // The struct the algorithm's Fields table writes into, and its type.
  virtual void* fields() = 0;
  virtual const std::type_info& fields_type() const = 0;
  // A copy (traffic[i].cc starts from the fabric's settings).
  virtual std::unique_ptr<CcConfig> clone() const = 0;
  // Checks across keys after reading: "" or "key: problem (expected ...)".
  virtual std::string check() const = 0;
  // The algorithm object for one QP.
  virtual std::unique_ptr<CongestionControl> make() const = 0;
};

template <class Config, class Algorithm, std::string (*Check)(const Config&)>
class CcConfigOf : public CcConfig {
 public:
  explicit CcConfigOf(const char* name) : name_(name) {}
  const char* algorithm() const override { return name_; }
  void* fields() override { return &cfg_; }
  const std::type_info& fields_type() const override { return typeid(Config); }
  std::unique_ptr<CcConfig> clone() const override { return std::make_unique<CcConfigOf>(*this); }
  std::string check() const override { return Check(cfg_); }
  std::unique_ptr<CongestionControl> make() const override {
    return std::make_unique<Algorithm>(cfg_);
  }
  const Config& config() const { return cfg_; }

 private:
  const char* name_;
  Config cfg_;
};

struct CcAlgorithm {
  const char* name;
  const char* description;
  const ParamTable& (*params)();
  std::unique_ptr<CcConfig> (*new_config)();
};

// Every algorithm a scenario can name, besides "none".
std::span<const CcAlgorithm> cc_algorithms();

// The tables of `fabric.cc` and of `traffic[i].cc`: `algorithm` ("none" or
// an algorithm's name: choice value 0 or 1 + its index in cc_algorithms())
// and one object per algorithm, named after it, that applies with it. An
// item's algorithm defaults to the fabric's.
const ParamTable& cc_params();
const ParamTable& cc_item_params();

}  // namespace rdmasim
