import { demoReleasesDir } from '/work/wt-asof/dist/test/helpers/demo-release.js';
import Database from 'better-sqlite3';
import fs from 'node:fs';
const dir = demoReleasesDir();
const file = dir + '/' + fs.readFileSync(dir + '/CURRENT', 'utf8').trim();
console.log(file);
const db = new Database(file, { readonly: true });
console.log(db.prepare("select key, substr(value,1,300) v from meta").all());
console.log(db.prepare("select value, count(*) n, count(distinct first_observed) t, min(first_observed), max(first_observed) from dns_interval group by value order by n desc limit 5").all());
