/** @module What the OnlineControl object offers over RPC: the interface the class implements and its stubs are typed by. */
import { methodNames } from "../../rpc-surface";
import type {
  AppView,
  CreateAppRequest,
  ServingConfig,
  ServingConfigRequest,
  SplitWeights,
} from "../../schemas/online";
import type { GuardAction } from "../../online";
import type { GuardConfig } from "../../schemas/online";
import type { AppKeyRecord, GuardView, ServingChange } from "./online-control-core";

/** The deployment's applications and serving configuration (one object, `"default"`). */
export interface OnlineControlApi {
  /** A new application; its key is in this answer only. */
  createApp(input: CreateAppRequest): Promise<{ app: AppView; api_key: string }>;
  /** Every application (key prefixes only). */
  listApps(): AppView[];
  /** Revokes an application's key; null when unknown. */
  revokeApp(appId: string): AppView | null;
  /** What the key check needs (cached per isolate by the caller); null when unknown. */
  keyRecord(appId: string): AppKeyRecord | null;
  /** The serving configuration in force. */
  serving(): ServingConfig;
  /** Sets the versions served (and optionally the split). */
  setServing(input: ServingConfigRequest): ServingChange;
  /** Sets the traffic split. */
  setSplit(weights: SplitWeights): ServingChange;
  /** Counts scored sessions' rewards per version and applies the split guard; answers its actions. */
  reportOutcomes(outcomes: Array<{ version: number; reward: number }>): GuardAction[];
  /** The guard: config, rewards per version, log. */
  guard(): GuardView;
  /** Sets the guard's config. */
  setGuard(config: GuardConfig): GuardView;
}

/** Every method of OnlineControlApi, at run time. */
export const ONLINE_CONTROL_METHODS = methodNames<OnlineControlApi>({
  createApp: true,
  listApps: true,
  revokeApp: true,
  keyRecord: true,
  serving: true,
  setServing: true,
  setSplit: true,
  reportOutcomes: true,
  guard: true,
  setGuard: true,
});
