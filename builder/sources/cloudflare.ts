/** Cloudflare ips-v4 / ips-v6: one CIDR per line, the last line without a newline. All `cdn`. */
import { parseCidrLines } from './common/cidr-lines.js';
import type { SourceDefinition } from './types.js';

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'cloudflare',
  kind: 'provider_ranges',
  description: 'Cloudflare edge IP ranges (ips-v4, ips-v6)',
  urls: ['https://www.cloudflare.com/ips-v4', 'https://www.cloudflare.com/ips-v6'],
  attribution: { source: 'Cloudflare IP ranges', by: 'Cloudflare', license: 'no license stated' },
  parse: (text, file) =>
    parseCidrLines(text, file, { provider: 'Cloudflare', category: 'cdn', metadata: {}, columns: 'single' }),
};
