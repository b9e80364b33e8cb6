/** @module The one way this Worker's queue consumers treat a batch of messages. */
import type { z } from "zod";

/**
 * Handles every message of a batch concurrently: a body that fails `schema` is acknowledged and
 * logged (retrying cannot fix it, and it must not block the queue), a handled message is
 * acknowledged, and one whose handler throws is retried by the queue after `retryDelaySeconds`
 * (bounded by the consumer's max_retries, then the dead-letter queue).
 */
export async function consumeEach<S extends z.ZodType>(
  batch: MessageBatch<unknown>,
  schema: S,
  label: string,
  handle: (body: z.infer<S>) => Promise<void>,
  retryDelaySeconds = 2,
): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = schema.safeParse(message.body);
      if (!parsed.success) {
        console.error(`dropping malformed ${label} message`, {
          id: message.id,
          issues: parsed.error.issues.slice(0, 20),
        });
        message.ack();
        return;
      }
      try {
        await handle(parsed.data);
        message.ack();
      } catch (error) {
        console.error(`${label} message failed`, { id: message.id, error: String(error) });
        message.retry({ delaySeconds: retryDelaySeconds });
      }
    }),
  );
}
