import * as z from 'zod/mini';
import { type ProjectEvent, ProjectEventSchema } from '#schemas/events';

/**
 * One SQS message: one event for one webhook, with what the delivery needs to build the embed without reading
 * the project again. The webhook is named by its id only: its URL holds its token, which must not sit in a queue
 * or a dead-letter queue for days, so the delivery reads the URL from the config when it posts (and so honours a
 * config disabled or changed since the event was queued).
 */
const DeliveryMessageSchema = z.object({
  /** `<stream event id>:<webhook id>`: the same for every copy of this delivery, whatever redelivered it. */
  deliveryId: z.string().check(z.minLength(1)),
  webhook: z.object({ id: z.string() }),
  project: z.object({ id: z.string(), name: z.string() }),
  event: ProjectEventSchema,
  /** The 429s this delivery met before this copy was sent (see decideDelivery); absent on the first copy. */
  rateLimited: z.optional(z.object({ times: z.int().check(z.positive()), since: z.int() })),
});
export type DeliveryMessage = z.infer<typeof DeliveryMessageSchema> & { event: ProjectEvent };

export const deliveryIdOf = (streamEventId: string, webhookId: string) => `${streamEventId}:${webhookId}`;

export function parseDeliveryMessage(body: string): DeliveryMessage | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  const parsed = DeliveryMessageSchema.safeParse(json);
  return parsed.success ? (parsed.data as DeliveryMessage) : undefined;
}
