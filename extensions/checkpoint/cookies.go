package checkpoint

// cookieCacheSize is how many hosts a generation of the write-through
// cookie cache holds, so that Colly's jar does not read the store on
// every request. Once a store write failed it keeps every host (KeepAll).
const cookieCacheSize = 4096
