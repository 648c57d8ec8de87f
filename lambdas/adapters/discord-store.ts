import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DiscordLink } from '#domain/discord/link';
import type { ConditionalWrite, DiscordKeyStore, DiscordKeyView } from '#domain/ports';
import { batchGetConsistent, itemKeyId } from './batch-get';
import { isConditionFailure } from './conditions';
import { boundFingerprints, discordLinkAttributes, keyOf } from './layout';
import type { Item } from './paging';
import { TABLE } from './table-definition';

/**
 * The project item's attributes of its Discord link (a project without them is not linked). The CDK stack lets the
 * Discord function read the project item and write nothing of it; the dashboard and the console write these.
 */
const DISCORD_LINK_ATTRIBUTES = ['discordPublicKey', 'discordApplicationId', 'discordResetCooldown', 'discordLinkedAt'] as const;

/**
 * Every attribute of a key item the Discord commands' writes name, written or tested: the Discord function's IAM
 * grant allows updates naming these and the keys, nothing else (lib/constructs/discord-interactions.ts).
 */
export const DISCORD_KEY_ATTRIBUTES = [
  // written: the link (and its index key), the reset and its cooldown
  'discord_id',
  TABLE.indexes.byDiscordId.partitionKey,
  'fingerprints',
  'hwidResetAt',
  // tested
  'keyHash',
  'projectId',
  'revoked',
  'expires_at',
] as const;

/** A reset asks its old `fingerprints` back (how many it unbound); the attribute-limited grant allows no ALL_*. */
export const DISCORD_RETURN_VALUES = ['UPDATED_OLD'] as const;

/**
 * The Discord link on the project item, and the buyers' commands on key items: each command's write is one
 * conditional UpdateItem on the key's own item, then one consistent read of the key, which tells the domain what the
 * table holds after a success or a refusal.
 */
export class DynamoDiscordStore implements DiscordKeyStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    readonly tableName: string,
    /** The key store's index lookup (KeyStore.keyIdsByDiscordId): the one place the byDiscordId index is read. */
    private readonly keyIdsByDiscordId: (projectId: string, discordId: string) => Promise<string[]>,
  ) {}

  async discordLink(projectId: string): Promise<DiscordLink | undefined> {
    const { Item: item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keyOf.project(projectId),
        ConsistentRead: true,
        ProjectionExpression: DISCORD_LINK_ATTRIBUTES.join(', '),
      }),
    );
    if (typeof item?.discordPublicKey !== 'string') return undefined;
    return {
      publicKey: item.discordPublicKey,
      applicationId: typeof item.discordApplicationId === 'string' ? item.discordApplicationId : null,
      resetCooldown: Number(item.discordResetCooldown),
      linkedAt: Number(item.discordLinkedAt),
    };
  }

  async setDiscordLink(projectId: string, link: DiscordLink): Promise<boolean> {
    return this.onProject(projectId, {
      UpdateExpression:
        link.applicationId === null
          ? 'SET discordPublicKey = :key, discordResetCooldown = :cooldown, discordLinkedAt = :at REMOVE discordApplicationId'
          : 'SET discordPublicKey = :key, discordResetCooldown = :cooldown, discordLinkedAt = :at, discordApplicationId = :app',
      ExpressionAttributeValues: {
        ':key': link.publicKey,
        ':cooldown': link.resetCooldown,
        ':at': link.linkedAt,
        ...(link.applicationId === null ? {} : { ':app': link.applicationId }),
      },
    });
  }

  async removeDiscordLink(projectId: string): Promise<boolean> {
    return this.onProject(projectId, { UpdateExpression: `REMOVE ${DISCORD_LINK_ATTRIBUTES.join(', ')}` });
  }

  private async onProject(projectId: string, update: { UpdateExpression: string; ExpressionAttributeValues?: Record<string, unknown> }): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({ TableName: this.tableName, Key: keyOf.project(projectId), ConditionExpression: 'attribute_exists(pk)', ...update }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async linkKeyToUser(key: { projectId: string; keyId: string; keyHash: string }, discordId: string, now: number): Promise<ConditionalWrite> {
    const link = discordLinkAttributes(key.projectId, discordId);
    return this.conditionalWrite(key.keyId, {
      UpdateExpression: 'SET discord_id = :user, #dk = :dk',
      ConditionExpression:
        'keyHash = :hash AND projectId = :p AND revoked = :zero AND expires_at > :now AND (attribute_not_exists(discord_id) OR attribute_type(discord_id, :null) OR discord_id = :user)',
      ExpressionAttributeNames: { '#dk': TABLE.indexes.byDiscordId.partitionKey },
      ExpressionAttributeValues: {
        ':user': link.discord_id,
        ':dk': link[TABLE.indexes.byDiscordId.partitionKey],
        ':hash': key.keyHash,
        ':p': key.projectId,
        ':zero': 0,
        ':now': now,
        ':null': 'NULL',
      },
    });
  }

  async keysOfUser(projectId: string, discordId: string): Promise<DiscordKeyView[]> {
    const ids = await this.keyIdsByDiscordId(projectId, discordId);
    const keys = ids.map((id) => keyOf.key(id));
    const items = await batchGetConsistent(this.db, this.tableName, keys);
    // The index is eventually consistent: a key it still lists may have been linked to someone else since.
    return keys.flatMap((key) => {
      const item = items.get(itemKeyId(key));
      return item && item.projectId === projectId && item.discord_id === discordId ? [viewOf(item)] : [];
    });
  }

  async resetMachinesOfUser(key: { projectId: string; keyId: string }, discordId: string, now: number, cooldownCutoff: number): Promise<ConditionalWrite> {
    return this.conditionalWrite(key.keyId, {
      UpdateExpression: 'SET fingerprints = :none, hwidResetAt = :now',
      ConditionExpression:
        'projectId = :p AND discord_id = :user AND size(fingerprints) > :zero AND (attribute_not_exists(hwidResetAt) OR hwidResetAt <= :cutoff)',
      ExpressionAttributeValues: { ':none': {}, ':now': now, ':p': key.projectId, ':user': discordId, ':zero': 0, ':cutoff': cooldownCutoff },
      ReturnValues: 'UPDATED_OLD',
    });
  }

  /**
   * One conditional UpdateItem, then the key as the table holds it (one consistent GetItem naming the attributes a
   * reply needs): under the attribute-limited grant IAM refuses ReturnValues ALL_OLD/ALL_NEW, so the item cannot
   * come back with the write. UPDATED_OLD does: a reset's old `fingerprints` says how many machines it unbound.
   */
  private async conditionalWrite(
    keyId: string,
    update: {
      UpdateExpression: string;
      ConditionExpression: string;
      ExpressionAttributeNames?: Record<string, string>;
      ExpressionAttributeValues: Record<string, unknown>;
      ReturnValues?: (typeof DISCORD_RETURN_VALUES)[number];
    },
  ): Promise<ConditionalWrite> {
    let written: boolean;
    let updatedOld: Item | undefined;
    try {
      const { Attributes } = await this.db.send(new UpdateCommand({ TableName: this.tableName, Key: keyOf.key(keyId), ...update }));
      written = true;
      updatedOld = Attributes;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      written = false;
    }
    const { Item: item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keyOf.key(keyId), ConsistentRead: true, ProjectionExpression: VIEW_ATTRIBUTES.join(', ') }),
    );
    if (!written) return { written: false, key: item && viewOf(item) };
    const key = viewOf(item ?? {});
    return { written: true, key: updatedOld && 'fingerprints' in updatedOld ? { ...key, boundMachines: boundFingerprints(updatedOld).length } : key };
  }
}

/** What a reply says of a key, and what the rules compare: read back after each write. */
const VIEW_ATTRIBUTES = [
  'id',
  'projectId',
  'keyHash',
  'discord_id',
  'revoked',
  'expires_at',
  'max_uses',
  'current_uses',
  'max_fingerprints',
  'fingerprints',
  'hwidResetAt',
] as const;

function viewOf(item: Item): DiscordKeyView {
  return {
    id: String(item.id),
    projectId: String(item.projectId),
    keyHash: String(item.keyHash),
    discordId: typeof item.discord_id === 'string' ? item.discord_id : null,
    revoked: item.revoked === 1,
    expiresAt: Number(item.expires_at),
    maxUses: typeof item.max_uses === 'number' ? item.max_uses : null,
    currentUses: Number(item.current_uses ?? 0),
    maxFingerprints: typeof item.max_fingerprints === 'number' ? item.max_fingerprints : null,
    boundMachines: boundFingerprints(item).length,
    hwidResetAt: typeof item.hwidResetAt === 'number' ? item.hwidResetAt : null,
  };
}
