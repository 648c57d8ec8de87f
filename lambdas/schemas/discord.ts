import * as z from 'zod/mini';

/**
 * Discord's interaction objects as the endpoint reads them (Discord's contract, not ours: unknown fields are
 * ignored, only what the commands need is read), and the replies it sends.
 */

/** Discord's interaction types the endpoint answers. */
export const INTERACTION_TYPE = { ping: 1, applicationCommand: 2, messageComponent: 3, modalSubmit: 5 } as const;
/** Discord's reply types the endpoint sends. */
export const REPLY_TYPE = { pong: 1, channelMessage: 4, modal: 9 } as const;
/** Message flag: only the user who asked sees the reply. */
export const EPHEMERAL = 64;

const User = z.object({ id: z.string() });
const CommandOption = z.object({ name: z.string(), type: z.number(), value: z.optional(z.unknown()) });
const TextInput = z.object({ custom_id: z.optional(z.string()), value: z.optional(z.unknown()) });
const ActionRow = z.object({ components: z.optional(z.array(TextInput)) });

export const Interaction = z.object(
  {
    type: z.number({ error: 'An interaction must have a numeric "type"' }),
    application_id: z.optional(z.string()),
    data: z.optional(
      z.object({
        name: z.optional(z.string()),
        custom_id: z.optional(z.string()),
        options: z.optional(z.array(CommandOption)),
        components: z.optional(z.array(ActionRow)),
      }),
    ),
    member: z.optional(z.object({ user: z.optional(User) })),
    user: z.optional(User),
  },
  { error: 'An interaction must be a JSON object' },
);
export type Interaction = z.infer<typeof Interaction>;

/** A text reply: ephemeral, and mentions in it ping no one (`allowed_mentions.parse` empty). */
export interface MessageReply {
  type: typeof REPLY_TYPE.channelMessage;
  data: { content: string; flags: typeof EPHEMERAL; allowed_mentions: { parse: [] } };
}

export interface ModalReply {
  type: typeof REPLY_TYPE.modal;
  data: {
    custom_id: string;
    title: string;
    components: { type: 1; components: { type: 4; custom_id: string; label: string; style: 1; min_length: number; max_length: number; required: true }[] }[];
  };
}

export type InteractionReply = { type: typeof REPLY_TYPE.pong } | MessageReply | ModalReply;
