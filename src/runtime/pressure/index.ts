/** @module Front door of KV-pressure concurrency control: the controller (policy object) and the rule. */
export {
  BATCH_IDLE_MS,
  PressureController,
  type PressureDeps,
  backendMetricsUrls,
} from "./pressure-controller";
export {
  BINDING_FRACTION,
  COOLDOWN_SAMPLES,
  DECREASE_FACTOR,
  INCREASE_FRACTION,
  INITIAL_PRESSURE_STATE,
  type PressureSample,
  type PressureState,
  classify,
  nextPressureState,
  sharesOf,
} from "./pressure-rule";
export { metricsUrlOf, parsePressure } from "./prometheus-text";
