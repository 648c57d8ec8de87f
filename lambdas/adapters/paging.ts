import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

export type Item = Record<string, unknown>;

/** Every page of a query, as the table returns them (1 MB at most each), mapped item by item. */
export async function* queryPages<T>(db: DynamoDBDocumentClient, input: QueryCommandInput, map: (item: Item) => T): AsyncIterable<T[]> {
  let startKey: Item | undefined;
  do {
    const page = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    yield (page.Items ?? []).map(map);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** Every item of a query, all pages read. */
export async function queryAll<T>(db: DynamoDBDocumentClient, input: QueryCommandInput, map: (item: Item) => T): Promise<T[]> {
  const all: T[] = [];
  for await (const page of queryPages(db, input, map)) all.push(...page);
  return all;
}
