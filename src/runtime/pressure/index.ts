/** @module Front door of KV-pressure concurrency control: the controller (policy object) and the rule. */
export { PressureController, type PressureDeps } from "./pressure-controller";
export {
  COOLDOWN_SAMPLES,
  DECREASE_FACTOR,
  INITIAL_PRESSURE_STATE,
  type PressureSample,
  type PressureState,
  nextPressureState,
  sharesOf,
} from "./pressure-rule";
export { metricsUrlOf, parsePressure } from "./prometheus-text";
