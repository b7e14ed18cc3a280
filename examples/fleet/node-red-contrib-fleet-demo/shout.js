// A node for the fleet demo: it upper-cases msg.payload.
module.exports = (RED) => {
  function Shout(config) {
    RED.nodes.createNode(this, config)
    this.on('input', (msg, send, done) => {
      msg.payload = String(msg.payload).toUpperCase()
      send(msg)
      done()
    })
  }
  RED.nodes.registerType('shout', Shout)
}
