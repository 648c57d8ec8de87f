import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument, OPENAPI_PATH, serializeOpenApiDocument } from '#http/openapi/document';

// `npm run openapi`: regenerate openapi.json from the route definitions; a unit test fails while it is stale.

const document = buildOpenApiDocument();
writeFileSync(OPENAPI_PATH, serializeOpenApiDocument(document));
const operations = Object.values(document.paths).flatMap((methods) => Object.keys(methods)).length;
console.log(`Wrote ${OPENAPI_PATH} (OpenAPI ${document.openapi}, ${operations} operations)`);
