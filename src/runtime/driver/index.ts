/** @module The stateless driver as the Worker's drive route uses it: one drive of one rollout, and what it is given. */
export { driveRollout, type DriverDeps } from "./drive-rollout";
