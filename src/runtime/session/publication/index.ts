/**
 * @module A finished rollout's way to the trainer: published with retries, then its delivery
 * checked and the result sent again while the feed lacks it.
 */
export { publishIfPending } from "./result-publication";
export { DELIVERY_CHECK_DELAYS_MS, onDeliveryChecked } from "./result-delivery";
