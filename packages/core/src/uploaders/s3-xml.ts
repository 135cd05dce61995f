/**
 * Reads the small XML documents S3 answers with (POST/PUT results and errors): the text of
 * `Location`, `Bucket`, `Key`, `ETag` and `Message`. A regex is enough for these flat documents
 * and works outside the DOM (tests, workers).
 */

export interface S3XmlAnswer {
  Location?: string;
  Bucket?: string;
  Key?: string;
  ETag?: string;
  Message?: string;
  Code?: string;
}

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescapeXml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => entities[name] ?? '');
}

/** The first `<name>` element's text, unescaped. */
export function xmlElement(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return match?.[1] === undefined ? undefined : unescapeXml(match[1]);
}

export function readS3Xml(xml: string): S3XmlAnswer {
  const answer: S3XmlAnswer = {};
  for (const name of ['Location', 'Bucket', 'Key', 'ETag', 'Message', 'Code'] as const) {
    const value = xmlElement(xml, name);
    if (value !== undefined) answer[name] = value;
  }
  return answer;
}
