/** Browser entry of the web console (bundled by scripts/build-console.ts). */
import { render } from 'preact'
import { App } from './app'
import './styles/index.css'

render(<App />, document.getElementById('app')!)
