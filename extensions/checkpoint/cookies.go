package checkpoint

// cookieCacheSize is how many hosts a generation of the cookie cache
// holds: the checkpoint keeps the cookie strings of the 4,096 to 8,192
// hosts used last (an empty one for most), whatever the number of hosts a
// crawl meets, so that Colly's cookie jar does not read the store on
// every request. The cache is written through by setHostCookies: a host
// it dropped reads its cookies back from the store when next used. Once a
// write to the store failed, the cache is the only copy of what was not
// written: it keeps every host from then on (KeepAll).
const cookieCacheSize = 4096
